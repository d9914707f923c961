"""PixelShuffle / PixelUnshuffle (values against a loop reference, autograd,
PyTorch's errors) and the channel dropouts on every rank (PyTorch's
warnings, errors and which elements share a draw)."""
import warnings

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember import nn

from conftest import torch


def shuffle_ref(x, r):
    *batch, c, h, w = x.shape
    out = np.empty((*batch, c // (r * r), h * r, w * r), x.dtype)
    for k in range(c // (r * r)):
        for i in range(r):
            for j in range(r):
                out[..., k, i::r, j::r] = x[..., k * r * r + i * r + j, :, :]
    return out


@pytest.mark.parametrize("shape,r", [((1, 8, 2, 3), 2), ((8, 2, 3), 2), ((2, 3, 18, 2, 1), 3),
                                     ((0, 4, 2, 2), 2), ((2, 5, 3, 3), 1)])
def test_pixel_shuffle_values_and_inverse(shape, r, rng):
    x = rng.standard_normal(shape)
    y = F.pixel_shuffle(ember.tensor(x), r)
    np.testing.assert_array_equal(y.numpy(), shuffle_ref(x, r))
    back = nn.PixelUnshuffle(r)(y)
    np.testing.assert_array_equal(back.numpy(), x)
    assert nn.PixelShuffle(r)(ember.tensor(x)).shape == y.shape


def test_pixel_shuffle_gradients(rng):
    x = ember.tensor(rng.standard_normal((2, 8, 2, 3)), requires_grad=True)
    assert ember.autograd.gradcheck(lambda t: F.pixel_shuffle(t, 2), (x,))
    y = ember.tensor(rng.standard_normal((2, 2, 4, 6)), requires_grad=True)
    assert ember.autograd.gradcheck(lambda t: F.pixel_unshuffle(t, 2), (y,))
    assert ember.autograd.gradgradcheck(lambda t: F.pixel_shuffle(t, 2), (x,))


def test_pixel_shuffle_integer_dtypes_and_repr():
    x = ember.arange(16).reshape(1, 4, 2, 2)
    assert F.pixel_shuffle(x, 2).dtype is ember.int64
    assert repr(nn.PixelShuffle(3)) == "PixelShuffle(upscale_factor=3)"
    assert repr(nn.PixelUnshuffle(2)) == "PixelUnshuffle(downscale_factor=2)"


PIXEL_ERRORS = [
    ("pixel_shuffle", (1, 6, 2, 3), 2, RuntimeError,
     "pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
     "upscale_factor, but input.size(-3)=6 is not divisible by 4"),
    ("pixel_shuffle", (8, 2), 2, RuntimeError,
     "pixel_shuffle expects input to have at least 3 dimensions, but got input with 2 "
     "dimension(s)"),
    ("pixel_shuffle", (1, 8, 2, 3), 0, RuntimeError,
     "pixel_shuffle expects a positive upscale_factor, but got 0"),
    ("pixel_shuffle", (1, 8, 2, 3), 2.0, TypeError,
     "pixel_shuffle(): argument 'upscale_factor' (position 2) must be int, not float"),
    ("pixel_unshuffle", (1, 2, 5, 6), 2, RuntimeError,
     "pixel_unshuffle expects height to be divisible by downscale_factor, but input.size(-2)=5 "
     "is not divisible by 2"),
    ("pixel_unshuffle", (1, 2, 4, 5), 2, RuntimeError,
     "pixel_unshuffle expects width to be divisible by downscale_factor, but input.size(-1)=5 "
     "is not divisible by 2"),
    ("pixel_unshuffle", (4, 6), 2, RuntimeError,
     "pixel_unshuffle expects input to have at least 3 dimensions, but got input with 2 "
     "dimension(s)"),
    ("pixel_unshuffle", (1, 2, 4, 6), -1, RuntimeError,
     "pixel_unshuffle expects a positive downscale_factor, but got -1"),
]


@pytest.mark.parametrize("fn,shape,r,exc,msg", PIXEL_ERRORS)
def test_pixel_shuffle_errors(fn, shape, r, exc, msg):
    x = ember.ones(shape)
    with pytest.raises(exc) as info:
        getattr(F, fn)(x, r)
    assert str(info.value) == msg
    assert x.shape == shape and bool((x == 1).all())
    if torch is not None:
        with pytest.raises(exc) as tinfo:
            getattr(torch.nn.functional, fn)(torch.ones(shape), r)
        assert str(tinfo.value) == msg


# ---- channel dropout on every rank ----------------------------------------------
def _rank_msg(name, ndim, spatial):
    return (f"{name}: Received a {ndim}-D input to {name}, which is deprecated and will result "
            f"in an error in a future release. To retain the behavior and silence this "
            f"warning, please use dropout instead. Note that {name} exists to provide "
            f"channel-wise dropout on inputs with {spatial} spatial dimensions, a channel "
            f"dimension, and an optional batch dimension (i.e. {spatial + 1}D or "
            f"{spatial + 2}D inputs).")


THREE_D = ("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D "
           "dropout behavior is desired - input is interpreted as shape (N, C, L), where C is "
           "the channel dim. This behavior will change in a future release to interpret the "
           "input as one without a batch dimension, i.e. shape (C, H, W). To maintain the 1D "
           "channel-wise dropout behavior, please switch to using dropout1d instead.")
FEATURE = "Feature dropout requires at least 2 dimensions in the input"
ONE_D = ("dropout1d: Expected {}D or 3D input, but received a {}D input. Note that dropout1d "
         "exists to provide channel-wise dropout on inputs with 1 spatial dimension, a channel "
         "dimension, and an optional batch dimension (i.e. 2D or 3D inputs).")


def _expected(fn, ndim):
    """(warnings, error message or None, number of leading dims that index
    the independent draws) as PyTorch 2.13."""
    if fn == "dropout1d":
        if ndim not in (2, 3):
            return [], ONE_D.format(2, ndim), None
        return [], None, 2 if ndim == 3 else 1
    if fn == "dropout2d":
        warns = [] if ndim in (3, 4) else [_rank_msg("dropout2d", ndim, 2)]
        if ndim == 3:
            warns.append(THREE_D)
        return warns, FEATURE if ndim < 2 else None, 2
    warns = [] if ndim in (4, 5) else [_rank_msg("dropout3d", ndim, 3)]
    return warns, FEATURE if ndim < 1 else None, 2 if ndim == 5 else 1


@pytest.mark.parametrize("fn", ["dropout1d", "dropout2d", "dropout3d"])
@pytest.mark.parametrize("ndim", range(0, 7))
def test_channel_dropout_ranks(fn, ndim):
    shape = (4, 5, 3, 2, 2, 2)[:ndim]
    warns, error, lead = _expected(fn, ndim)
    x = ember.ones(shape, dtype=ember.float64, requires_grad=True)
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        if error is not None:
            with pytest.raises(RuntimeError) as info:
                getattr(F, fn)(x, 0.5, training=True)
            assert str(info.value) == error
        else:
            y = getattr(F, fn)(x, 0.5, training=True)
    assert [str(w.message) for w in got] == warns
    assert all(w.category is UserWarning for w in got)
    if torch is not None:
        with warnings.catch_warnings(record=True) as tgot:
            warnings.simplefilter("always")
            try:
                getattr(torch.nn.functional, fn)(torch.ones(shape), 0.5, training=True)
                terr = None
            except RuntimeError as e:
                terr = str(e)
        assert [str(w.message) for w in tgot] == warns and terr == error
    if error is not None:
        return
    v = y.detach().numpy()
    assert set(np.unique(v)) <= {0.0, 2.0}
    # every element of one draw's block holds the same value
    blocks = v.reshape(int(np.prod(shape[:lead], dtype=int)), -1)
    assert (blocks == blocks[:, :1]).all()
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), v)


def test_dropout2d_module_on_2d_input_warns_and_proceeds():
    layer = nn.Dropout2d(0.5)
    x = ember.ones(40, 50)
    with pytest.warns(UserWarning, match="Received a 2-D input to dropout2d"):
        y = layer(x)
    v = y.numpy()
    assert set(np.unique(v)) == {0.0, 2.0}   # element-wise: each (N, C) entry is a channel
    layer.eval()
    with pytest.warns(UserWarning, match="Received a 2-D input to dropout2d"):
        assert layer(x) is x


@pytest.mark.parametrize("fn", [F.dropout1d, F.dropout2d, F.dropout3d])
def test_channel_dropout_p_edges(fn):
    x = ember.ones(2, 3, 4, 5)[..., 0] if fn is F.dropout1d else ember.ones(2, 3, 4, 5, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert fn(x, 0.0) is x and fn(x, 0.7, training=False) is x
        assert bool((fn(x, 1.0) == 0).all())
        with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, "
                                             "but got 1.5"):
            fn(x, 1.5)
        z = x.clone()
        assert fn(z, 1.0, inplace=True) is z and bool((z == 0).all())
