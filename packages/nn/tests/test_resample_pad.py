"""interpolate (nearest, nearest-exact, linear, bilinear, bicubic, trilinear, area)
and pad (constant, reflect, replicate, circular) against NumPy (float64):
forward, gradcheck/gradgradcheck, non-contiguous / unbatched / empty
inputs, bad input with PyTorch's wording."""
import itertools

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F
from ember.autograd import gradcheck, gradgradcheck
from ember.nn import _kernels

from conftest import requires_torch, torch


@pytest.fixture(autouse=True, params=["installed", "composed"])
def kernels(request, monkeypatch):
    """Every test runs twice: with the installed kernel packages (if any) and
    with the composed forms alone."""
    if request.param == "composed":
        monkeypatch.setattr(_kernels, "_table", dict(_kernels.COMPOSED))
    return request.param


def E(a, grad=False):
    t = ember.from_numpy(np.ascontiguousarray(a))
    return t.requires_grad_() if grad else t


# ---- NumPy references ---------------------------------------------------------------
def src_nearest(size, out, scale, exact=False):
    r = np.float32(1.0 / scale) if scale else np.float32(size) / np.float32(out)
    i = np.arange(out, dtype=np.float32) + (np.float32(0.5) if exact else np.float32(0))
    return np.minimum(np.floor(i * r).astype(np.int64), size - 1)


def np_nearest(x, out, scales, exact=False):
    for i, (o, s) in enumerate(zip(out, scales)):
        x = np.take(x, src_nearest(x.shape[2 + i], o, s, exact), axis=2 + i)
    return x


def np_linear(x, out, align_corners, scales):
    """Each output point as the weighted sum over the 2^nd corners of its cell."""
    nd = x.ndim - 2
    coords = []
    for i, (o, s) in enumerate(zip(out, scales)):
        n = x.shape[2 + i]
        if align_corners:
            c = np.arange(o) * ((n - 1) / (o - 1)) if o > 1 else np.zeros(o)
        else:
            r = 1 / s if s else n / o
            c = np.maximum((np.arange(o) + 0.5) * r - 0.5, 0)
        coords.append(c)
    res = np.zeros(x.shape[:2] + tuple(out))
    for pos in itertools.product(*[range(o) for o in out]):
        acc = 0.0
        for corner in itertools.product((0, 1), repeat=nd):
            weight, index = 1.0, []
            for i, (p, side) in enumerate(zip(pos, corner)):
                c, n = coords[i][p], x.shape[2 + i]
                lo = min(int(np.floor(c)), n - 1)
                frac = c - lo
                index.append(min(lo + side, n - 1))
                weight *= frac if side else 1 - frac
            acc = acc + weight * x[(slice(None), slice(None)) + tuple(index)]
        res[(slice(None), slice(None)) + pos] = acc
    return res


def np_bicubic(x, out, align_corners, scales, a=-0.75):
    """Each output pixel from the 4×4 input pixels around its source point,
    weighted by Keys' cubic convolution kernel; taps clamp at the edges."""
    def kernel(d):
        d = abs(d)
        if d <= 1:
            return ((a + 2) * d - (a + 3)) * d * d + 1
        if d < 2:
            return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a
        return 0.0

    def source(o, n, size, scale):
        if align_corners:
            return o * (n - 1) / (size - 1) if size > 1 else 0.0
        return (o + 0.5) * (1 / scale if scale else n / size) - 0.5
    h, w = x.shape[2:]
    res = np.zeros(x.shape[:2] + tuple(out))
    for i in range(out[0]):
        sy = source(i, h, out[0], scales[0])
        for j in range(out[1]):
            sx = source(j, w, out[1], scales[1])
            acc = 0.0
            for ty in range(-1, 3):
                for tx in range(-1, 3):
                    yy, xx = int(np.floor(sy)) + ty, int(np.floor(sx)) + tx
                    wgt = kernel(sy - yy) * kernel(sx - xx)
                    acc = acc + wgt * x[:, :, min(max(yy, 0), h - 1), min(max(xx, 0), w - 1)]
            res[:, :, i, j] = acc
    return res


def np_area(x, out):
    res = np.zeros(x.shape[:2] + tuple(out))
    for pos in itertools.product(*[range(o) for o in out]):
        sl = tuple(slice((i * n) // o, -(-((i + 1) * n) // o))
                   for i, n, o in zip(pos, x.shape[2:], out))
        res[(slice(None), slice(None)) + pos] = x[(slice(None), slice(None)) + sl].mean(
            axis=tuple(range(2, x.ndim)))
    return res


# ---- interpolate --------------------------------------------------------------------
def test_nearest_integer_scale_repeats(rng):
    x = rng.standard_normal((2, 3, 4, 5))
    got = F.interpolate(E(x), scale_factor=2)
    np.testing.assert_array_equal(got.numpy(), x.repeat(2, 2).repeat(2, 3))
    got = F.interpolate(E(x), size=(8, 15), mode="nearest")
    np.testing.assert_array_equal(got.numpy(), x.repeat(2, 2).repeat(3, 3))


RESAMPLE = [  # (shape, mode, size, scale_factor, align_corners, recompute)
    ((2, 2, 5), "nearest", 8, None, None, None),
    ((2, 2, 4, 5), "nearest", None, 1.7, None, None),
    ((2, 2, 4, 5), "nearest", None, (0.6, 2.3), None, True),
    ((1, 2, 3, 2, 5), "nearest", (5, 3, 2), None, None, None),
    ((2, 2, 4, 5), "nearest-exact", None, 1.6, None, None),
    ((2, 2, 7), "linear", 4, None, False, None),
    ((2, 2, 4), "linear", None, 2.5, True, None),
    ((2, 2, 4, 5), "bilinear", (7, 3), None, False, None),
    ((2, 2, 4, 5), "bilinear", (7, 3), None, True, None),
    ((1, 3, 5, 4), "bilinear", None, (1.5, 0.75), False, None),
    ((1, 3, 5, 4), "bilinear", None, 1.3, False, True),
    ((1, 2, 3, 3, 4), "trilinear", (4, 2, 7), None, False, None),
    ((1, 2, 3, 3, 4), "trilinear", None, 1.5, True, None),
    ((2, 2, 4, 5), "bicubic", (7, 3), None, False, None),
    ((1, 2, 4, 5), "bicubic", None, (1.5, 0.7), True, None),
    ((1, 2, 5, 4), "bicubic", None, 1.3, False, None),
    ((2, 2, 7, 5), "area", (3, 2), None, None, None),
    ((2, 2, 9), "area", None, 0.5, None, None),
]


@pytest.mark.parametrize("shape,mode,size,scale,ac,recompute", RESAMPLE)
def test_interpolate_matches_numpy(rng, shape, mode, size, scale, ac, recompute):
    x = rng.standard_normal(shape)
    got = F.interpolate(E(x), size, scale, mode, ac, recompute)
    nd = len(shape) - 2
    if size is not None:
        out = [size] * nd if isinstance(size, int) else list(size)
        scales = [None] * nd
    else:
        sf = [scale] * nd if not isinstance(scale, tuple) else list(scale)
        out = [int(np.floor(n * s)) for n, s in zip(shape[2:], sf)]
        scales = [None] * nd if recompute else sf
    if mode in ("nearest", "nearest-exact"):
        want = np_nearest(x, out, scales, mode == "nearest-exact")
    elif mode == "area":
        want = np_area(x, out)
    elif mode == "bicubic":
        want = np_bicubic(x, out, ac, scales)
    else:
        want = np_linear(x, out, ac, scales)
    assert got.shape == tuple(want.shape)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-13)


def test_interpolate_non_contiguous_and_empty(rng):
    base = rng.standard_normal((2, 3, 5, 4))
    x = E(base).transpose(2, 3)
    got = F.interpolate(x, size=(6, 7), mode="bilinear")
    np.testing.assert_allclose(got.numpy(), np_linear(base.transpose(0, 1, 3, 2), (6, 7), False,
                                                      (None, None)), rtol=1e-12, atol=1e-13)
    out = F.interpolate(ember.zeros(0, 2, 3, 3), scale_factor=2)
    assert tuple(out.shape) == (0, 2, 6, 6)


def test_upsample_modules(rng):
    x = E(rng.standard_normal((1, 2, 3, 4)))
    np.testing.assert_array_equal(nn.UpsamplingNearest2d(scale_factor=2)(x).numpy(),
                                  F.interpolate(x, scale_factor=2).numpy())
    np.testing.assert_array_equal(
        nn.UpsamplingBilinear2d(size=(5, 6))(x).numpy(),
        F.interpolate(x, size=(5, 6), mode="bilinear", align_corners=True).numpy())
    up = nn.Upsample(scale_factor=(2, 1.5), mode="bilinear")
    assert up.scale_factor == (2.0, 1.5)
    assert repr(up) == "Upsample(scale_factor=(2.0, 1.5), mode='bilinear')"
    assert repr(nn.Upsample(size=3)) == "Upsample(size=3, mode='nearest')"


# ---- pad ----------------------------------------------------------------------------
NUMPY_MODE = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}
PADS = [  # (shape, pad)
    ((2, 3, 5), (2, 3)),
    ((3, 5), (4, 1)),
    ((2, 2, 4, 5), (1, 2, 3, 0)),
    ((2, 4, 5), (2, 2, 1, 3)),
    ((1, 2, 3, 4, 5), (1, 2, 0, 3, 2, 1)),
    ((2, 3, 4, 3), (2, 1, 1, 2, 2, 0)),
]


def np_pad(x, pad, mode):
    widths = [(0, 0)] * x.ndim
    for i in range(len(pad) // 2):
        widths[x.ndim - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    return np.pad(x, widths, mode=NUMPY_MODE[mode])


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize("shape,pad", PADS)
def test_pad_matches_numpy(rng, mode, shape, pad):
    x = rng.standard_normal(shape)
    got = F.pad(E(x), pad, mode=mode)
    np.testing.assert_array_equal(got.numpy(), np_pad(x, pad, mode))


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_pad_modules_match_functional(rng, mode):
    name = {"reflect": "Reflection", "replicate": "Replication", "circular": "Circular"}[mode]
    for nd, shape in ((1, (2, 3, 5)), (2, (2, 3, 4, 4)), (3, (1, 2, 3, 3, 4))):
        x = rng.standard_normal(shape)
        m = getattr(nn, f"{name}Pad{nd}d")(2)
        np.testing.assert_array_equal(m(E(x)).numpy(), np_pad(x, (2,) * (2 * nd), mode))


def test_constant_pad_value_and_negative_amounts(rng):
    x = rng.standard_normal((2, 3, 4))
    got = F.pad(E(x), (1, -2, -1, 2, 1, 0), value=2.5)
    want = np.pad(x[:, 1:, :2], [(1, 0), (0, 2), (1, 0)], constant_values=2.5)
    np.testing.assert_array_equal(got.numpy(), want)
    np.testing.assert_array_equal(nn.ConstantPad2d((0, 1, 2, 0), -1.0)(E(x)).numpy(),
                                  np.pad(x, [(0, 0), (2, 0), (0, 1)], constant_values=-1.0))
    np.testing.assert_array_equal(nn.ZeroPad1d(2)(E(x)).numpy(),
                                  np.pad(x, [(0, 0), (0, 0), (2, 2)]))


def test_negative_amounts_crop_in_the_other_modes():
    x = ember.arange(5.0).view(1, 1, 5)
    assert F.pad(x, (-1, 2), mode="circular").tolist() == [[[1, 2, 3, 4, 1, 2]]]
    assert F.pad(x, (2, -1), mode="circular").tolist() == [[[2, 3, 0, 1, 2, 3]]]
    assert F.pad(x, (-1, 2), mode="reflect").tolist() == [[[1, 2, 3, 4, 3, 2]]]
    assert F.pad(x, (-2, 1), mode="replicate").tolist() == [[[2, 3, 4, 4]]]


def test_pad_non_contiguous_and_empty_batch(rng):
    base = rng.standard_normal((2, 5, 4))
    x = E(base).transpose(1, 2)
    np.testing.assert_array_equal(F.pad(x, (2, 1), mode="reflect").numpy(),
                                  np_pad(base.transpose(0, 2, 1), (2, 1), "reflect"))
    out = F.pad(ember.zeros(0, 2, 3), (1, 2), mode="replicate")
    assert tuple(out.shape) == (0, 2, 6)


def test_pad_returns_a_new_tensor():
    x = ember.ones(2, 3)
    y = F.pad(x, (0, 0))
    y.add_(1)
    assert x.tolist() == [[1, 1, 1], [1, 1, 1]]


# ---- derivatives -------------------------------------------------------------------
def G(*shape, seed=0):
    return E(np.random.default_rng(seed).standard_normal(shape), grad=True)


GRAD_CASES = [
    ("nearest2d", lambda x: F.interpolate(x, scale_factor=1.5), lambda: (G(1, 2, 3, 3),)),
    ("nearest1d", lambda x: F.interpolate(x, size=5), lambda: (G(2, 2, 3),)),
    ("nearest3d", lambda x: F.interpolate(x, size=(3, 2, 4)), lambda: (G(1, 1, 2, 3, 2),)),
    ("nearest_exact", lambda x: F.interpolate(x, size=(4, 5), mode="nearest-exact"),
     lambda: (G(1, 2, 3, 3),)),
    ("linear", lambda x: F.interpolate(x, size=7, mode="linear"), lambda: (G(2, 2, 4),)),
    ("bilinear", lambda x: F.interpolate(x, size=(5, 4), mode="bilinear"),
     lambda: (G(1, 2, 3, 3),)),
    ("bilinear_ac", lambda x: F.interpolate(x, scale_factor=1.7, mode="bilinear",
                                            align_corners=True), lambda: (G(1, 2, 3, 2),)),
    ("bicubic", lambda x: F.interpolate(x, size=(5, 2), mode="bicubic"),
     lambda: (G(1, 2, 3, 4),)),
    ("trilinear", lambda x: F.interpolate(x, size=(3, 3, 2), mode="trilinear"),
     lambda: (G(1, 1, 2, 2, 3),)),
    ("area", lambda x: F.interpolate(x, size=(2, 3), mode="area"), lambda: (G(1, 2, 5, 4),)),
    ("pad_reflect", lambda x: F.pad(x, (2, 1, 1, 2), mode="reflect"),
     lambda: (G(2, 2, 3, 4),)),
    ("pad_replicate", lambda x: F.pad(x, (3, 1), mode="replicate"), lambda: (G(2, 2, 3),)),
    ("pad_circular", lambda x: F.pad(x, (1, 1, 2, 0, 0, 1), mode="circular"),
     lambda: (G(1, 1, 2, 3, 3),)),
    ("pad_constant", lambda x: F.pad(x, (1, -1, 2, 0), value=0.5), lambda: (G(2, 3, 4),)),
]
SECOND_ORDER = {"bilinear", "bicubic", "nearest2d", "pad_reflect", "pad_replicate",
                "trilinear"}


@pytest.mark.parametrize("name,fn,make", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_gradcheck(name, fn, make):
    assert gradcheck(fn, make(), eps=1e-6, atol=1e-5)


@pytest.mark.parametrize("name,fn,make", [c for c in GRAD_CASES if c[0] in SECOND_ORDER],
                         ids=[c[0] for c in GRAD_CASES if c[0] in SECOND_ORDER])
def test_gradgradcheck(name, fn, make):
    assert gradgradcheck(fn, make(), eps=1e-6, atol=1e-4)


# ---- bad input ----------------------------------------------------------------------
ERRORS = [
    ("interp-bilinear-rank", lambda F, L: F.interpolate(L.ones(2, 3, 4), mode="bilinear",
                                                        size=4),
     NotImplementedError, "Got 3D input, but bilinear mode needs 4D input"),
    ("interp-unknown-mode", lambda F, L: F.interpolate(L.ones(2, 3, 4, 4), mode="bogus",
                                                       size=4),
     NotImplementedError, "Input Error: Only 3D, 4D and 5D input Tensors supported (got 4D) "
                          "for the modes: nearest | linear | bilinear | bicubic | trilinear | "
                          "lanczos | area | nearest-exact (got bogus)"),
    ("interp-both", lambda F, L: F.interpolate(L.ones(2, 3, 4, 4), size=4, scale_factor=2),
     ValueError, "only one of size or scale_factor should be defined"),
    ("interp-neither", lambda F, L: F.interpolate(L.ones(2, 3, 4, 4)), ValueError,
     "either size or scale_factor should be defined"),
    ("interp-size-len", lambda F, L: F.interpolate(L.ones(2, 3, 4, 4), size=(4, 4, 4)),
     ValueError, "Input and output must have the same number of spatial dimensions, but got "
                 "input with spatial dimensions of [4, 4] and output size of (4, 4, 4)."),
    ("interp-scale-len", lambda F, L: F.interpolate(L.ones(2, 3, 4, 4),
                                                    scale_factor=(2, 2, 2)),
     ValueError, "Input and scale_factor must have the same number of spatial dimensions"),
    ("interp-align-nearest", lambda F, L: F.interpolate(L.ones(2, 3, 4, 4), size=4,
                                                        align_corners=True),
     ValueError, "align_corners option can only be set with the interpolating modes: linear "
                 "| bilinear | bicubic | trilinear"),
    ("interp-zero", lambda F, L: F.interpolate(L.ones(2, 3, 4, 4), scale_factor=0.1),
     RuntimeError, "Input and output sizes should be greater than 0, but got input (H: 4, W: 4)"
                   " output (H: 0, W: 0)"),
    ("pad-reflect-too-large", lambda F, L: F.pad(L.ones(2, 3, 4), (4, 1), mode="reflect"),
     RuntimeError, "Argument #4: Padding size should be less than the corresponding input "
                   "dimension, but got: padding (4, 1) at dimension 2 of input [2, 3, 4]"),
    ("pad-rank", lambda F, L: F.pad(L.ones(2, 3, 4, 4), (1, 1), mode="reflect"),
     NotImplementedError, "Padding size 2 is not supported for 4D input tensor."),
    ("pad-odd", lambda F, L: F.pad(L.ones(2, 3, 4), (1, 1, 1), mode="reflect"), RuntimeError,
     "Padding length must be divisible by 2"),
    ("pad-mode", lambda F, L: F.pad(L.ones(2, 3, 4), (1, 1), mode="bogus"),
     NotImplementedError, "Unrecognised padding mode bogus"),
    ("pad-wrap-twice", lambda F, L: F.pad(L.ones(2, 3, 4), (5, 1), mode="circular"),
     RuntimeError, "Padding value causes wrapping around more than once."),
    ("pad-value", lambda F, L: F.pad(L.ones(2, 3, 4), (1, 1), mode="replicate", value=2.0),
     RuntimeError, "Padding mode \"replicate\" doesn't take in value argument"),
    ("pad-empty-dim", lambda F, L: F.pad(L.ones(2, 3, 0), (1, 1), mode="replicate"),
     RuntimeError, "Expected 2D or 3D (batch mode) tensor with possibly 0 batch size and other "
                   "non-zero dimensions for input, but got: [2, 3, 0]"),
    ("pad-float-amount", lambda F, L: F.pad(L.ones(1, 2, 3), (1.5, 1), mode="reflect"),
     TypeError, "pad(): argument 'pad' (position 2) must be tuple of ints, but found element "
                "of type float at pos 0"),
    ("pad-constant-long", lambda F, L: F.pad(L.ones(2, 3, 4), (1,) * 8), RuntimeError,
     "Padding length should be less than or equal to two times the input dimension but got "
     "padding length 8 and input of dimension 3"),
]


@pytest.mark.parametrize("name,call,exc,message", ERRORS, ids=[e[0] for e in ERRORS])
def test_bad_input(name, call, exc, message):
    with pytest.raises(exc) as info:
        call(F, ember)
    assert message in str(info.value)


@requires_torch
@pytest.mark.torch
@pytest.mark.parametrize("name,call,exc,message", ERRORS, ids=[e[0] for e in ERRORS])
def test_torch_says_the_same(name, call, exc, message):
    with pytest.raises(exc) as info:
        call(torch.nn.functional, torch)
    assert message in str(info.value)


def test_interpolate_needs_floating_input():
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        F.interpolate(ember.ones(1, 2, 3, 3, dtype=ember.int64), size=5, mode="bilinear")


def test_circular_pad_module_checks_rank():
    with pytest.raises(ValueError, match=r"expected 3D or 4D input \(got 5D input\)"):
        nn.CircularPad2d(1)(ember.ones(2, 3, 4, 5, 6))
