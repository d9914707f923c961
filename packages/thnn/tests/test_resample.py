"""ember.thnn's upsampling (nearest, bilinear) and reflection /
replication padding: against NumPy, backward, bad input."""

import numpy as np
import pytest

import ember.th as th
import ember.thnn as nn

from thnn_testing import N, T, TOL, fd_check, linear_weights, nearest_index, pad_ref, strided


UP_CASES = [((2, 3, 4, 5), (8, 10), None), ((1, 2, 5, 3), (3, 7), None),
            ((2, 1, 3, 4), (7, 9), (2.5, 2.3)), ((3, 4, 4), (4, 4), None),
            ((1, 1, 1, 1), (3, 2), None), ((1, 2, 6, 6), (4, 3), (0.7, 0.5)),
            ((2, 2, 3, 5), (3, 10), (1.3, 2.0))]


@pytest.mark.parametrize("shape,size,scales", UP_CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_upsample_nearest2d(shape, size, scales, dtype):
    x = np.random.default_rng(23).standard_normal(shape).astype(dtype)
    y = N(nn.upsample_nearest2d_forward(strided(x), size, scales))
    sh, sw = scales or (None, None)
    ih, iw = nearest_index(size[0], shape[-2], sh), nearest_index(size[1], shape[-1], sw)
    np.testing.assert_array_equal(y, x[..., ih, :][..., iw])
    x = x.astype(np.float64)
    fd_check(lambda x: N(nn.upsample_nearest2d_forward(T(x), size, scales)), [x],
             lambda gy: [N(nn.upsample_nearest2d_backward_input(T(gy), x.shape, scales))])


@pytest.mark.parametrize("shape,size,scales", UP_CASES)
@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_upsample_bilinear2d(shape, size, scales, align, dtype):
    x = np.random.default_rng(24).standard_normal(shape).astype(dtype)
    y = N(nn.upsample_bilinear2d_forward(strided(x), size, align, scales))
    sh, sw = (None, None) if scales is None or align else scales
    mh = linear_weights(size[0], shape[-2], align, sh)
    mw = linear_weights(size[1], shape[-1], align, sw)
    ref = np.einsum("oh,...hw,pw->...op", mh, x.astype(np.float64), mw)
    np.testing.assert_allclose(y, ref, rtol=TOL[dtype] * 10, atol=TOL[dtype] * 10)
    x = x.astype(np.float64)
    sc = None if align else scales
    fd_check(lambda x: N(nn.upsample_bilinear2d_forward(T(x), size, align, sc)), [x],
             lambda gy: [N(nn.upsample_bilinear2d_backward_input(strided(gy), x.shape, align,
                                                                 sc))])


def test_upsample_bad_input():
    with pytest.raises(RuntimeError, match=r"Expected 3D or 4D .* but got: \[2, 3\]"):
        nn.upsample_nearest2d_forward(th.randn(2, 3), (4, 4))
    with pytest.raises(RuntimeError, match=r"greater than 0, but got input \(H: 0, W: 3\)"):
        nn.upsample_bilinear2d_forward(th.empty(1, 1, 0, 3), (2, 2))
    with pytest.raises(RuntimeError, match=r"output \(H: 0, W: 2\)"):
        nn.upsample_nearest2d_forward(th.randn(1, 1, 2, 3), (0, 2))
    with pytest.raises(TypeError, match="Float or Double"):
        nn.upsample_nearest2d_forward(th.empty(1, 1, 2, 2, dtype=th.int64), (4, 4))
    with pytest.raises(RuntimeError, match=r"grad_output \[1, 2, 4, 4\]"):
        nn.upsample_nearest2d_backward_input(th.randn(1, 2, 4, 4), (1, 1, 2, 2))
    with pytest.raises(ValueError, match="output_size"):
        nn.upsample_nearest2d_forward(th.randn(1, 1, 2, 2), (1, 2, 3))
    # an empty batch is fine
    assert tuple(nn.upsample_nearest2d_forward(th.empty(0, 2, 3, 3), (6, 6)).shape) == (0, 2, 6, 6)


# ---- padding ---------------------------------------------------------------------
PAD_CASES = [  # name, k, numpy mode, input shape, padding (last dim first)
    ("reflection_pad1d", 1, "reflect", (2, 3, 6), (2, 3)),
    ("reflection_pad1d", 1, "reflect", (3, 4), (3, 0)),
    ("reflection_pad2d", 2, "reflect", (2, 2, 4, 5), (1, 2, 3, 1)),
    ("reflection_pad2d", 2, "reflect", (2, 3, 3), (2, 2, 0, 2)),
    ("reflection_pad3d", 3, "reflect", (2, 1, 3, 4, 5), (2, 1, 0, 3, 1, 2)),
    ("reflection_pad3d", 3, "reflect", (2, 3, 2, 4), (1, 1, 1, 1, 1, 1)),
    ("replication_pad1d", 1, "edge", (2, 3, 4), (5, 1)),
    ("replication_pad2d", 2, "edge", (1, 2, 3, 2), (3, 0, 2, 4)),
    ("replication_pad3d", 3, "edge", (2, 1, 2, 3, 2), (1, 2, 0, 1, 2, 1)),
    ("replication_pad3d", 3, "edge", (2, 3, 2, 2), (1, 1, 1, 1, 1, 1)),
]


@pytest.mark.parametrize("name,k,mode,shape,padding", PAD_CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_padding(name, k, mode, shape, padding, dtype):
    fwd, bwd = getattr(nn, name + "_forward"), getattr(nn, name + "_backward_input")
    x = np.random.default_rng(25).standard_normal(shape).astype(dtype)
    np.testing.assert_array_equal(N(fwd(strided(x), padding)), pad_ref(x, k, mode, padding))
    x = x.astype(np.float64)
    fd_check(lambda x: N(fwd(T(x), padding)), [x],
             lambda gy: [N(bwd(strided(gy), x.shape, padding))])


@pytest.mark.parametrize("name", ["reflection_pad2d", "replication_pad2d"])
def test_padding_negative_crops(name):
    x = np.random.default_rng(26).standard_normal((2, 5, 6))
    y = N(getattr(nn, name + "_forward")(T(x), (-1, 2, 1, -2)))
    mode = "reflect" if name.startswith("reflection") else "edge"
    np.testing.assert_array_equal(y, np.pad(x, ((0, 0), (1, 0), (0, 2)), mode=mode)[:, :-2, 1:])
    fd_check(lambda x: N(getattr(nn, name + "_forward")(T(x), (-1, 2, 1, -2))), [x],
             lambda gy: [N(getattr(nn, name + "_backward_input")(T(gy), x.shape,
                                                                  (-1, 2, 1, -2)))])


def test_padding_bad_input():
    x = th.randn(1, 3, 4)
    with pytest.raises(RuntimeError, match=r"Padding size should be less than the corresponding "
                                           r"input dimension, but got: padding \(4, 1\) at "
                                           r"dimension 2 of input \[1, 3, 4\]"):
        nn.reflection_pad1d_forward(x, (4, 1))
    with pytest.raises(RuntimeError, match=r"padding \(1, 3\) at dimension 1 of input \[1, 3, 4\]"):
        nn.reflection_pad2d_forward(x, (0, 0, 1, 3))
    with pytest.raises(RuntimeError, match=r"Expected 4D or 5D .* but got: \[1, 3, 4\]"):
        nn.replication_pad3d_forward(x, 1)
    with pytest.raises(RuntimeError, match=r"padding \(2, 0\) at dimension 1 of input "
                                           r"\[1, 2, 3, 4\]"):
        nn.reflection_pad3d_forward(th.randn(1, 2, 3, 4), (0, 0, 0, 0, 2, 0))
    with pytest.raises(RuntimeError, match=r"non-zero dimensions for input, but got: \[1, 0, 4\]"):
        nn.replication_pad1d_forward(th.empty(1, 0, 4), 1)
    with pytest.raises(RuntimeError, match="too small"):
        nn.replication_pad1d_forward(x, (-2, -2))
    with pytest.raises(ValueError, match="padding must be an int or 4 ints"):
        nn.reflection_pad2d_forward(x, (1, 1))
    with pytest.raises(RuntimeError, match=r"grad_output of shape \[1, 3, 6\]"):
        nn.reflection_pad1d_backward_input(th.randn(1, 3, 7), (1, 3, 4), (1, 1))
    before = N(x).copy()
    with pytest.raises(RuntimeError):
        nn.reflection_pad1d_forward(x, (9, 9))
    np.testing.assert_array_equal(N(x), before)
    # a batch of 0 is fine
    assert tuple(nn.replication_pad2d_forward(th.empty(0, 2, 3, 3), 1).shape) == (0, 2, 5, 5)
