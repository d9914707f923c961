"""ember.thcunn's adaptive, 3-d and 1-d poolings and window_output_size
against ember.thnn's (the CPU kernels are the reference) on fresh random
float64 and float32 data: forwards, indices, backwards, options, batched
and unbatched forms, non-contiguous inputs, degenerate sizes and errors
(same exception type, the same message where libTHNN's kernel is mirrored).
Runs on a GPU or on libTHC's emulated device."""
import re

import numpy as np
import pytest

import ember.th as th
import ember.thc as thc
import ember.thcunn as k

thnn = pytest.importorskip("ember.thnn", reason="the CPU kernels (ember-thnn) are the reference")

pytestmark = pytest.mark.needs_device
DTYPES = [("float64", 1e-10), ("float32", 1e-4)]


def pair(shape, rng, dtype="float64", low=-1.0, high=1.0):
    """The same random values as an ember.th and an ember.thc tensor."""
    a = rng.uniform(low, high, size=shape).astype(dtype)
    return th.from_numpy(a.copy()), thc.from_numpy(a.copy())


def same(cpu, gpu, tol):
    c, g = cpu.numpy(), gpu.cpu().numpy()
    assert c.shape == g.shape and c.dtype == g.dtype, (c.shape, g.shape, c.dtype, g.dtype)
    assert np.allclose(c, g, rtol=tol, atol=tol, equal_nan=True), np.abs(c - g).max()


def raises_alike(cpu_call, gpu_call, exact=True):
    """Both raise the same exception type; the same message when `exact`
    (kernels mirrored from libTHNN), else returns both messages."""
    with pytest.raises(Exception) as ec:
        cpu_call()
    with pytest.raises(Exception) as eg:
        gpu_call()
    assert type(eg.value) is type(ec.value), (ec.value, eg.value)
    if exact:
        assert str(eg.value) == str(ec.value)
    return str(ec.value), str(eg.value)


def bwd_grads(out_c, rng, dtype):
    return pair(tuple(out_c.shape), rng, dtype)


# ---- window_output_size ---------------------------------------------------------
def test_window_output_size_is_libthnns():
    grid = [(n, kk, s, p, d, c) for n in (0, 1, 2, 5, 7) for kk in (0, 1, 2, 3)
            for s in (0, 1, 2, 3) for p in (-1, 0, 1) for d in (0, 1, 2) for c in (0, 1)]
    for args in grid:
        want = thnn._lib.thnn_window_output_size(*args)
        got = k._lib.thcunn_window_output_size(*args)
        assert got == want, args
        if want < 0:
            assert k._lib.thcunn_last_status() == thnn._lib.thnn_last_status()
            assert k._ffi.string(k._lib.thcunn_last_error()) == \
                thnn._ffi.string(thnn._lib.thnn_last_error())


def test_pool2d_uses_window_output_size():
    """max_pool2d's geometry errors come from the shared function."""
    _, x = pair((1, 1, 2, 2), np.random.default_rng(0))
    with pytest.raises(RuntimeError, match=r"input size 2 \(padded 2\) is smaller than the "
                                           r"kernel extent 3"):
        k.max_pool2d_forward(x, 3)
    with pytest.raises(ValueError, match="stride=0"):
        k.avg_pool2d_forward(x, 1, 0)


# ---- adaptive_avg_pool2d ----------------------------------------------------------------
ADAPTIVE_CASES = [  # input shape, output_size
    ((2, 3, 7, 5), (3, 2)), ((2, 6, 6), 3), ((1, 2, 5, 8), (5, 8)), ((1, 2, 4, 9), (6, 4)),
    ((3, 2, 9, 7), 1), ((2, 2, 6, 4), (None, 3)), ((4, 5, 3), (7, None))]


@pytest.mark.parametrize("dtype,tol", DTYPES)
@pytest.mark.parametrize("shape,osize", ADAPTIVE_CASES)
def test_adaptive_avg_pool2d(dtype, tol, shape, osize):
    rng = np.random.default_rng(10)
    xc, xg = pair(shape, rng, dtype)
    oc = thnn.adaptive_avg_pool2d_forward(xc, osize)
    og = k.adaptive_avg_pool2d_forward(xg, osize)
    same(oc, og, tol)
    gc, gg = bwd_grads(oc, rng, dtype)
    same(thnn.adaptive_avg_pool2d_backward_input(gc, xc.shape),
         k.adaptive_avg_pool2d_backward_input(gg, xg.shape), tol)


@pytest.mark.parametrize("dtype,tol", DTYPES)
@pytest.mark.parametrize("shape,osize", ADAPTIVE_CASES)
def test_adaptive_max_pool2d(dtype, tol, shape, osize):
    rng = np.random.default_rng(11)
    xc, xg = pair(shape, rng, dtype)
    oc, ic = thnn.adaptive_max_pool2d_forward(xc, osize)
    og, ig = k.adaptive_max_pool2d_forward(xg, osize)
    same(oc, og, 0)
    same(ic, ig, 0)
    gc, gg = bwd_grads(oc, rng, dtype)
    same(thnn.adaptive_max_pool2d_backward_input(gc, xc.shape, ic),
         k.adaptive_max_pool2d_backward_input(gg, xg.shape, ig), tol)


def test_adaptive_pool2d_non_contiguous_and_empty_batch():
    rng = np.random.default_rng(12)
    xc, xg = pair((2, 3, 6, 7), rng)
    xc, xg = xc.transpose(-1, -2), xg.transpose(-1, -2)   # (2, 3, 7, 6), strided
    assert not xg.is_contiguous()
    oc = thnn.adaptive_avg_pool2d_forward(xc, (3, 4))
    og = k.adaptive_avg_pool2d_forward(xg, (3, 4))
    same(oc, og, 1e-12)
    mc, ic = thnn.adaptive_max_pool2d_forward(xc, (4, 5))
    mg, ig = k.adaptive_max_pool2d_forward(xg, (4, 5))
    same(mc, mg, 0)
    same(ic, ig, 0)
    gc, gg = pair((2, 3, 5, 4), rng)                      # strided grad_output
    gc, gg = gc.transpose(-1, -2), gg.transpose(-1, -2)
    same(thnn.adaptive_max_pool2d_backward_input(gc, (2, 3, 7, 6), ic),
         k.adaptive_max_pool2d_backward_input(gg, (2, 3, 7, 6), ig), 1e-12)
    gc, gg = pair((2, 3, 4, 3), rng)
    gc, gg = gc.transpose(-1, -2), gg.transpose(-1, -2)
    same(thnn.adaptive_avg_pool2d_backward_input(gc, (2, 3, 7, 6)),
         k.adaptive_avg_pool2d_backward_input(gg, (2, 3, 7, 6)), 1e-12)
    # an empty batch
    xc, xg = pair((0, 3, 5, 4), rng)
    same(thnn.adaptive_avg_pool2d_forward(xc, 2), k.adaptive_avg_pool2d_forward(xg, 2), 0)
    for a, b in zip(thnn.adaptive_max_pool2d_forward(xc, 2), k.adaptive_max_pool2d_forward(xg, 2)):
        same(a, b, 0)


def test_adaptive_max_pool2d_ties_and_nan():
    rng = np.random.default_rng(13)
    a = rng.integers(0, 3, size=(2, 3, 8, 7)).astype("float64")   # many ties
    a[0, 0, 1, 1] = a[1, 2, 5, 6] = a[1, 1, 0, 0] = np.nan
    xc, xg = th.from_numpy(a.copy()), thc.from_numpy(a.copy())
    oc, ic = thnn.adaptive_max_pool2d_forward(xc, (3, 3))
    og, ig = k.adaptive_max_pool2d_forward(xg, (3, 3))
    same(oc, og, 0)
    same(ic, ig, 0)
    assert np.isnan(og.cpu().numpy()).sum() >= 3   # cells overlap: a NaN may rule two


def test_adaptive_avg_pool2d_gradient_against_finite_sum():
    """The gathering backward is the adjoint of the forward: <g, f(x)> = <b(g), x>."""
    rng = np.random.default_rng(14)
    _, x = pair((2, 3, 11, 9), rng)
    y = k.adaptive_avg_pool2d_forward(x, (4, 5))
    _, g = pair(tuple(y.shape), rng)
    gi = k.adaptive_avg_pool2d_backward_input(g, x.shape)
    lhs = float((g.cpu().numpy() * y.cpu().numpy()).sum())
    rhs = float((gi.cpu().numpy() * x.cpu().numpy()).sum())
    assert abs(lhs - rhs) < 1e-10


# ---- 3-d pooling ----------------------------------------------------------------------
POOL3D_CASES = [  # shape, kernel, stride, padding, dilation, ceil_mode
    ((2, 2, 5, 6, 5), (2, 2, 2), (2, 2, 2), (0, 0, 0), (1, 1, 1), False),
    ((1, 3, 6, 5, 7), (3, 2, 3), (2, 1, 2), (1, 1, 1), (1, 1, 1), True),
    ((2, 4, 5, 5, 4), (2, 3, 2), (1, 2, 3), (1, 1, 0), (2, 1, 1), True),
    ((3, 4, 5, 6), (3, 3, 3), (2, 2, 2), (1, 0, 1), (1, 2, 1), False),   # unbatched
    ((2, 2, 7, 6, 8), 3, 1, 1, 1, False),                                # overlapping
    ((1, 2, 6, 6, 6), 2, None, 0, 1, True),                              # stride = kernel
]


@pytest.mark.parametrize("dtype,tol", DTYPES)
@pytest.mark.parametrize("case", POOL3D_CASES)
def test_max_pool3d(dtype, tol, case):
    shape, kk, s, p, d, ceil = case
    rng = np.random.default_rng(20)
    xc, xg = pair(shape, rng, dtype)
    oc, ic = thnn.max_pool3d_forward(xc, kk, s, p, d, ceil)
    og, ig = k.max_pool3d_forward(xg, kk, s, p, d, ceil)
    same(oc, og, 0)
    same(ic, ig, 0)
    gc, gg = bwd_grads(oc, rng, dtype)
    same(thnn.max_pool3d_backward_input(gc, xc.shape, ic),
         k.max_pool3d_backward_input(gg, xg.shape, ig), tol)


@pytest.mark.parametrize("dtype,tol", DTYPES)
@pytest.mark.parametrize("case", POOL3D_CASES)
@pytest.mark.parametrize("cip,divisor", [(True, None), (False, None), (True, 5), (False, -3)])
def test_avg_pool3d(dtype, tol, case, cip, divisor):
    shape, kk, s, p, _, ceil = case
    rng = np.random.default_rng(21)
    xc, xg = pair(shape, rng, dtype)
    oc = thnn.avg_pool3d_forward(xc, kk, s, p, ceil, cip, divisor)
    og = k.avg_pool3d_forward(xg, kk, s, p, ceil, cip, divisor)
    same(oc, og, tol)
    gc, gg = bwd_grads(oc, rng, dtype)
    same(thnn.avg_pool3d_backward_input(gc, xc.shape, kk, s, p, ceil, cip, divisor),
         k.avg_pool3d_backward_input(gg, xg.shape, kk, s, p, ceil, cip, divisor), tol)


def test_max_pool3d_ties_nan_and_padding_only_windows():
    rng = np.random.default_rng(22)
    a = rng.integers(0, 2, size=(2, 2, 5, 6, 5)).astype("float64")
    a[0, 1, 2, 3, 1] = a[1, 0, 0, 0, 0] = np.nan
    xc, xg = th.from_numpy(a.copy()), thc.from_numpy(a.copy())
    for args in ((2, 1, 1, 1, True), (3, 2, 1, (1, 2, 1), False)):
        oc, ic = thnn.max_pool3d_forward(xc, *args)
        og, ig = k.max_pool3d_forward(xg, *args)
        same(oc, og, 0)
        same(ic, ig, 0)
    # kernel 2, dilation 3, padding 1 on a length-2 dim: the window reads
    # positions -1 and 2, both outside: -inf, index -1, no gradient
    b = rng.uniform(-1, 1, size=(1, 1, 1, 1, 2))
    xc, xg = th.from_numpy(b.copy()), thc.from_numpy(b.copy())
    oc, ic = thnn.max_pool3d_forward(xc, (1, 1, 2), 1, (0, 0, 1), (1, 1, 3))
    og, ig = k.max_pool3d_forward(xg, (1, 1, 2), 1, (0, 0, 1), (1, 1, 3))
    same(oc, og, 0)
    same(ic, ig, 0)
    assert ig.cpu().numpy().ravel().tolist() == [-1]
    gi = k.max_pool3d_backward_input(thc.from_numpy(np.ones((1, 1, 1, 1, 1))), b.shape, ig)
    assert (gi.cpu().numpy() == 0).all()


def test_pool3d_non_contiguous_empty_batch_and_big():
    rng = np.random.default_rng(23)
    xc, xg = pair((6, 5, 4, 3, 2), rng)
    xc, xg = xc.permute(4, 3, 2, 1, 0), xg.permute(4, 3, 2, 1, 0)   # (2, 3, 4, 5, 6) strided
    assert not xg.is_contiguous()
    oc, ic = thnn.max_pool3d_forward(xc, 2, 1, 1)
    og, ig = k.max_pool3d_forward(xg, 2, 1, 1)
    same(oc, og, 0)
    same(ic, ig, 0)
    same(thnn.avg_pool3d_forward(xc, 3, 2, 1, True, False),
         k.avg_pool3d_forward(xg, 3, 2, 1, True, False), 1e-12)
    gc, gg = pair((7, 6, 5, 3, 2), rng)                             # strided grad_output
    gc, gg = gc.permute(4, 3, 2, 1, 0), gg.permute(4, 3, 2, 1, 0)
    same(thnn.max_pool3d_backward_input(gc, (2, 3, 4, 5, 6), ic),
         k.max_pool3d_backward_input(gg, (2, 3, 4, 5, 6), ig), 1e-12)
    same(thnn.avg_pool3d_backward_input(gc, (2, 3, 4, 5, 6), 2, 1, 1),
         k.avg_pool3d_backward_input(gg, (2, 3, 4, 5, 6), 2, 1, 1), 1e-12)
    # an empty batch
    xc, xg = pair((0, 2, 4, 4, 4), rng)
    for a, b in zip(thnn.max_pool3d_forward(xc, 2), k.max_pool3d_forward(xg, 2)):
        same(a, b, 0)
    same(thnn.avg_pool3d_forward(xc, 2), k.avg_pool3d_forward(xg, 2), 0)
    gc, gg = pair((0, 2, 2, 2, 2), rng)
    same(thnn.avg_pool3d_backward_input(gc, (0, 2, 4, 4, 4), 2),
         k.avg_pool3d_backward_input(gg, (0, 2, 4, 4, 4), 2), 0)
    ic = th.from_numpy(np.zeros((0, 2, 2, 2, 2), dtype="int64"))
    ig = thc.from_numpy(np.zeros((0, 2, 2, 2, 2), dtype="int64"))
    same(thnn.max_pool3d_backward_input(gc, (0, 2, 4, 4, 4), ic),
         k.max_pool3d_backward_input(gg, (0, 2, 4, 4, 4), ig), 0)
    # many planes and windows (several blocks on a GPU)
    xc, xg = pair((2, 8, 16, 16, 16), rng, "float32")
    oc, ic = thnn.max_pool3d_forward(xc, 3, 2, 1)
    og, ig = k.max_pool3d_forward(xg, 3, 2, 1)
    same(oc, og, 0)
    same(ic, ig, 0)
    gc, gg = bwd_grads(oc, rng, "float32")
    same(thnn.max_pool3d_backward_input(gc, xc.shape, ic),
         k.max_pool3d_backward_input(gg, xg.shape, ig), 1e-5)
    same(thnn.avg_pool3d_backward_input(gc, xc.shape, 3, 2, 1),
         k.avg_pool3d_backward_input(gg, xg.shape, 3, 2, 1), 1e-5)


# ---- 1-d pooling ------------------------------------------------------------------------
@pytest.mark.parametrize("dtype,tol", DTYPES)
@pytest.mark.parametrize("shape", [(2, 3, 11), (3, 11)])
@pytest.mark.parametrize("kernel,stride,padding,dilation,ceil_mode", [
    (2, None, 0, 1, False), (3, 2, 1, 2, True), ([4], [3], [2], [1], True), (3, 1, 1, 1, False)])
def test_max_pool1d(dtype, tol, shape, kernel, stride, padding, dilation, ceil_mode):
    rng = np.random.default_rng(30)
    xc, xg = pair(shape, rng, dtype)
    oc, ic = thnn.max_pool1d_forward(xc, kernel, stride, padding, dilation, ceil_mode)
    og, ig = k.max_pool1d_forward(xg, kernel, stride, padding, dilation, ceil_mode)
    same(oc, og, 0)
    same(ic, ig, 0)
    gc, gg = bwd_grads(oc, rng, dtype)
    same(thnn.max_pool1d_backward_input(gc, xc.shape, ic),
         k.max_pool1d_backward_input(gg, xg.shape, ig), tol)


@pytest.mark.parametrize("dtype,tol", DTYPES)
@pytest.mark.parametrize("shape", [(2, 3, 11), (3, 11)])
@pytest.mark.parametrize("kernel,stride,padding,ceil_mode", [
    (2, None, 0, False), (4, 3, 2, True), ([3], [1], [1], False)])
@pytest.mark.parametrize("cip", [True, False])
def test_avg_pool1d(dtype, tol, shape, kernel, stride, padding, ceil_mode, cip):
    rng = np.random.default_rng(31)
    xc, xg = pair(shape, rng, dtype)
    oc = thnn.avg_pool1d_forward(xc, kernel, stride, padding, ceil_mode, cip)
    same(oc, k.avg_pool1d_forward(xg, kernel, stride, padding, ceil_mode, cip), tol)
    gc, gg = bwd_grads(oc, rng, dtype)
    same(thnn.avg_pool1d_backward_input(gc, xc.shape, kernel, stride, padding, ceil_mode, cip),
         k.avg_pool1d_backward_input(gg, xg.shape, kernel, stride, padding, ceil_mode, cip), tol)


@pytest.mark.parametrize("dtype,tol", DTYPES)
@pytest.mark.parametrize("shape", [(2, 3, 11), (3, 11)])
@pytest.mark.parametrize("osize", [4, 1, 11, [15]])
def test_adaptive_pool1d(dtype, tol, shape, osize):
    rng = np.random.default_rng(32)
    xc, xg = pair(shape, rng, dtype)
    oc, ic = thnn.adaptive_max_pool1d_forward(xc, osize)
    og, ig = k.adaptive_max_pool1d_forward(xg, osize)
    same(oc, og, 0)
    same(ic, ig, 0)
    gc, gg = bwd_grads(oc, rng, dtype)
    same(thnn.adaptive_max_pool1d_backward_input(gc, xc.shape, ic),
         k.adaptive_max_pool1d_backward_input(gg, xg.shape, ig), tol)
    ac = thnn.adaptive_avg_pool1d_forward(xc, osize)
    same(ac, k.adaptive_avg_pool1d_forward(xg, osize), tol)
    same(thnn.adaptive_avg_pool1d_backward_input(gc, xc.shape),
         k.adaptive_avg_pool1d_backward_input(gg, xg.shape), tol)


def test_pool1d_non_contiguous():
    rng = np.random.default_rng(33)
    xc, xg = pair((11, 3), rng)
    xc, xg = xc.transpose(0, 1), xg.transpose(0, 1)   # (3, 11), strided
    for a, b in zip(thnn.max_pool1d_forward(xc, 3, 2, 1), k.max_pool1d_forward(xg, 3, 2, 1)):
        same(a, b, 0)
    same(thnn.avg_pool1d_forward(xc, 3, 2, 1), k.avg_pool1d_forward(xg, 3, 2, 1), 1e-12)
    same(thnn.adaptive_avg_pool1d_forward(xc, 5), k.adaptive_avg_pool1d_forward(xg, 5), 1e-12)
    for a, b in zip(thnn.adaptive_max_pool1d_forward(xc, 5), k.adaptive_max_pool1d_forward(xg, 5)):
        same(a, b, 0)


# ---- errors -------------------------------------------------------------------------------
def _both(shape, dtype="float64", seed=40):
    return pair(shape, np.random.default_rng(seed), dtype)


ERROR_CASES = {
    # name: (function, args builder (cpu or gpu tensors -> args), exact message)
    "3d pool of a 3-d input": (
        "max_pool3d_forward", lambda t: (t[(4, 4, 4)], 2), True),
    "3d pad more than half the kernel": (
        "avg_pool3d_forward", lambda t: (t[(1, 1, 4, 4, 4)], 2, 1, (0, 2, 0)), True),
    "3d empty non-batch dim": (
        "max_pool3d_forward", lambda t: (t[(1, 1, 4, 0, 4)], 2), True),
    "3d kernel larger than the input": (
        "max_pool3d_forward", lambda t: (t[(1, 1, 4, 1, 4)], 2), True),
    "3d zero stride": (
        "avg_pool3d_forward", lambda t: (t[(1, 1, 4, 4, 4)], 2, (1, 0, 1)), True),
    "3d zero divisor": (
        "avg_pool3d_forward", lambda t: (t[(1, 1, 4, 4, 4)], 2, None, 0, False, True, 0), True),
    "3d integer input": (
        "avg_pool3d_forward", lambda t: (t["int", (1, 1, 4, 4, 4)], 2), True),
    "3d backward grad_output of a wrong shape": (
        "avg_pool3d_backward_input", lambda t: (t[(1, 2, 3, 2, 2)], (1, 2, 4, 4, 4), 2), True),
    "3d backward grad_output of another ndim": (
        "avg_pool3d_backward_input", lambda t: (t[(2, 2, 2, 2)], (1, 2, 4, 4, 4), 2), True),
    "3d max backward float indices": (
        "max_pool3d_backward_input",
        lambda t: (t[(1, 2, 2, 2, 2)], (1, 2, 4, 4, 4), t[(1, 2, 2, 2, 2)]), True),
    "3d max backward indices of a wrong shape": (
        "max_pool3d_backward_input",
        lambda t: (t[(1, 2, 2, 2, 2)], (1, 2, 4, 4, 4), t["idx", (1, 2, 2, 2, 3)]), True),
    "3d max backward 2-d grad_input": (
        "max_pool3d_backward_input",
        lambda t: (t[(2, 2)], (4, 4), t["idx", (2, 2)]), True),
    "adaptive max of a 2-d input": (
        "adaptive_max_pool2d_forward", lambda t: (t[(6, 4)], 2), True),
    "adaptive max empty dim": (
        "adaptive_max_pool2d_forward", lambda t: (t[(1, 2, 0, 4)], 2), True),
    "adaptive max empty channel dim": (
        "adaptive_max_pool2d_forward", lambda t: (t[(0, 3, 4)], 2), True),
    "adaptive max negative size": (
        "adaptive_max_pool2d_forward", lambda t: (t[(2, 3, 6, 4)], (-1, 2)), True),
    "adaptive max zero size": (
        "adaptive_max_pool2d_forward", lambda t: (t[(2, 3, 6, 4)], (0, 2)), True),
    "adaptive max backward other batch": (
        "adaptive_max_pool2d_backward_input",
        lambda t: (t[(2, 3, 2, 2)], (2, 4, 6, 4), t["idx", (2, 3, 2, 2)]), True),
    "adaptive avg of a 5-d input": (
        "adaptive_avg_pool2d_forward", lambda t: (t[(1, 2, 3, 4, 5)], 2), True),
    "adaptive avg empty dim": (
        "adaptive_avg_pool2d_forward", lambda t: (t[(1, 2, 5, 0)], 2), True),
    "adaptive avg zero size": (
        "adaptive_avg_pool2d_forward", lambda t: (t[(1, 2, 5, 4)], (3, 0)), True),
    "adaptive avg negative size": (
        "adaptive_avg_pool2d_forward", lambda t: (t[(1, 2, 5, 4)], (3, -2)), True),
    "adaptive avg integer input": (
        "adaptive_avg_pool2d_forward", lambda t: (t["int", (1, 2, 5, 4)], 2), True),
    "adaptive avg backward other batch": (
        "adaptive_avg_pool2d_backward_input", lambda t: (t[(2, 2, 3, 3)], (3, 2, 6, 6)), True),
    "adaptive avg backward other ndim": (
        "adaptive_avg_pool2d_backward_input", lambda t: (t[(2, 3, 3)], (2, 2, 6, 6)), True),
    "1d max of a 4-d input": (
        "max_pool1d_forward", lambda t: (t[(1, 2, 3, 4)], 2), True),
    "1d avg pad more than half": (
        "avg_pool1d_forward", lambda t: (t[(1, 2, 8)], 2, 1, 2), False),
    "1d max kernel larger than the input": (
        "max_pool1d_forward", lambda t: (t[(1, 2, 3)], 5), True),
    "1d adaptive max negative size": (
        "adaptive_max_pool1d_forward", lambda t: (t[(2, 7)], -1), True),
    "1d adaptive avg of a 1-d input": (
        "adaptive_avg_pool1d_forward", lambda t: (t[(7,)], 3), True),
    "1d adaptive avg zero size": (
        "adaptive_avg_pool1d_forward", lambda t: (t[(2, 7)], 0), False),
    "1d max backward of a 1-d grad": (
        "max_pool1d_backward_input", lambda t: (t[(3,)], (6,), t["idx", (3,)]), True),
    "bad kernel_size": (
        "max_pool3d_forward", lambda t: (t[(1, 1, 4, 4, 4)], (2, 2)), True),
}


class _Maker:
    def __init__(self, mod):
        self.th = mod is th
        self.mod = mod

    def __getitem__(self, key):
        kind, shape = key if isinstance(key, tuple) and isinstance(key[0], str) else ("f64", key)
        rng = np.random.default_rng(41)
        a = {"f64": lambda: rng.uniform(-1, 1, size=shape),
             "float32": lambda: rng.uniform(-1, 1, size=shape).astype("float32"),
             "int": lambda: rng.integers(0, 5, size=shape),
             "idx": lambda: np.zeros(shape, dtype="int64")}[kind]()
        return self.mod.from_numpy(a)


@pytest.mark.parametrize("name", list(ERROR_CASES))
def test_errors_as_thnn(name):
    fn, args, exact = ERROR_CASES[name]
    mc, mg = _Maker(th), _Maker(thc)
    msg_c, msg_g = raises_alike(lambda: getattr(thnn, fn)(*args(mc)),
                                lambda: getattr(k, fn)(*args(mg)), exact)
    # the sizes the CPU names, the GPU names too
    for size in re.findall(r"\[[\d, -]+\]", msg_c):
        assert size in msg_g, (msg_c, msg_g)


@pytest.mark.parametrize("fn,spatial", [("max_pool3d_backward_input", 3),
                                        ("adaptive_max_pool2d_backward_input", 2)])
@pytest.mark.parametrize("bad", [64, -2, 1000])
def test_bad_index_is_an_index_error_and_nothing_is_written(fn, spatial, bad):
    shape = (1, 2) + (4,) * spatial
    oshape = (1, 2) + (2,) * spatial
    rng = np.random.default_rng(42)
    gc, gg = pair(oshape, rng)
    idx = rng.integers(0, 4 ** spatial, size=oshape)
    idx.reshape(-1)[3] = bad
    idx.reshape(-1)[5] = bad + 7 if bad > 0 else -5   # a later bad one: the first is named
    ic, ig = th.from_numpy(idx.copy()), thc.from_numpy(idx.copy())
    msg_c, msg_g = raises_alike(lambda: getattr(thnn, fn)(gc, shape, ic),
                                lambda: getattr(k, fn)(gg, shape, ig))
    assert f"index {bad} out of range for an input plane of {4 ** spatial}" in msg_g
    # at the C level, a grad_input given is left as it was
    gi = thc.from_numpy(np.full(shape, 7.0))
    c_fn = getattr(k._lib, "thcunn_" + fn)
    assert c_fn(gi._p, gg._p, ig._p) == 2   # THC_ERR_INDEX
    assert (gi.cpu().numpy() == 7.0).all()


def test_outputs_are_checked_at_the_c_level():
    x = thc.from_numpy(np.random.default_rng(43).uniform(size=(1, 2, 4, 4, 4)))
    ind = thc.from_numpy(np.zeros((1, 2, 2, 2, 2), dtype="int64"))
    out = thc.empty((1, 2, 2, 2, 3), dtype=thc.float64)
    kk = s = [2, 2, 2]
    p, d = [0, 0, 0], [1, 1, 1]
    assert k._lib.thcunn_max_pool3d_forward(out._p, ind._p, x._p, kk, s, p, d, 0) == 4
    assert "expected output of shape [1, 2, 2, 2, 2] but got [1, 2, 2, 2, 3]" in \
        k._ffi.string(k._lib.thcunn_last_error()).decode()
    out = thc.empty((1, 2, 2, 2, 2), dtype=thc.float32)
    assert k._lib.thcunn_avg_pool3d_forward(out._p, x._p, kk, s, p, 0, 1, 0) == 3
    assert k._lib.thcunn_max_pool3d_forward(out._p, ind._p, x._p, kk, s, p, k._ffi.NULL,
                                            0) == 1
    assert k._lib.thcunn_max_pool3d_forward(k._ffi.NULL, ind._p, x._p, kk, s, p, d, 0) == 1
    strided = thc.empty((1, 2, 2, 2, 4), dtype=thc.float64)[..., ::2]
    assert k._lib.thcunn_avg_pool3d_forward(strided._p, x._p, kk, s, p, 0, 1, 0) == 4
    assert "must be contiguous" in k._ffi.string(k._lib.thcunn_last_error()).decode()
    # adaptive: the output's dtype must be the input's; leading dims must match
    x2 = thc.from_numpy(np.random.default_rng(44).uniform(size=(2, 3, 5, 5)))
    o32 = thc.empty((2, 3, 2, 2), dtype=thc.float32)
    assert k._lib.thcunn_adaptive_avg_pool2d_forward(o32._p, x2._p) == 3
    ow = thc.empty((2, 4, 2, 2), dtype=thc.float64)
    assert k._lib.thcunn_adaptive_avg_pool2d_forward(ow._p, x2._p) == 4
    assert "output [2, 4, 2, 2] does not fit input [2, 3, 5, 5]" in \
        k._ffi.string(k._lib.thcunn_last_error()).decode()
    i32 = thc.empty((2, 3, 2, 2), dtype=thc.int32)
    o = thc.empty((2, 3, 2, 2), dtype=thc.float64)
    assert k._lib.thcunn_adaptive_max_pool2d_forward(o._p, i32._p, x2._p) == 3


def test_a_cpu_tensor_is_refused():
    xc, _ = _both((1, 2, 4, 4, 4))
    for call in (lambda: k.max_pool3d_forward(xc, 2), lambda: k.avg_pool3d_forward(xc, 2),
                 lambda: k.adaptive_max_pool2d_forward(xc[0], 2),
                 lambda: k.adaptive_avg_pool2d_forward(xc[0], 2),
                 lambda: k.max_pool1d_forward(xc[0, 0, 0], 2)):
        with pytest.raises(TypeError, match="CUDA tensors"):
            call()


def test_functions_are_kernels_for_ember_nn():
    """ember.nn's spec table finds the kernels under the names it calls."""
    for name in ("max_pool3d_forward", "avg_pool3d_backward_input",
                 "adaptive_max_pool2d_backward_input", "adaptive_avg_pool2d_forward",
                 "max_pool1d_forward", "adaptive_avg_pool1d_backward_input"):
        assert getattr(k.kernels, name) is getattr(k, name)
        assert hasattr(thnn, name)


@pytest.mark.parametrize("layer,args,kernel", [
    ("max_pool3d", dict(kernel_size=3, stride=2, padding=1, ceil_mode=True), "max_pool3d"),
    ("avg_pool3d", dict(kernel_size=2, stride=1, padding=1, count_include_pad=False),
     "avg_pool3d"),
    ("avg_pool3d", dict(kernel_size=3, stride=2, divisor_override=5), "avg_pool3d"),
    ("adaptive_max_pool2d", dict(output_size=(3, 2)), "adaptive_max_pool2d")])
def test_ember_nn_layers_on_cuda_run_these_kernels(monkeypatch, layer, args, kernel):
    ember = pytest.importorskip("ember")
    F = pytest.importorskip("ember.nn.functional")
    from ember.nn import _kernels
    calls = []
    for name in (f"{kernel}_forward", f"{kernel}_backward_input"):
        real = getattr(k, name)
        monkeypatch.setattr(k, name, lambda *a, _real=real, _name=name, **kw:
                            calls.append(_name) or _real(*a, **kw))
    _kernels.reset()
    try:
        rng = np.random.default_rng(50)
        shape = (2, 3, 6, 7) if kernel == "adaptive_max_pool2d" else (2, 3, 5, 6, 7)
        a, g = rng.standard_normal(shape), None
        outs = []
        for device in ("cpu", "cuda"):
            x = ember.tensor(a, device=device, requires_grad=True)
            y = getattr(F, layer)(x, **args)
            if g is None:
                g = rng.standard_normal(tuple(y.shape))
            y.backward(ember.tensor(g, device=device))
            outs.append((y.detach().cpu().numpy(), x.grad.cpu().numpy()))
        np.testing.assert_allclose(outs[1][0], outs[0][0], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(outs[1][1], outs[0][1], rtol=1e-12, atol=1e-12)
        assert calls == [f"{kernel}_forward", f"{kernel}_backward_input"]
    finally:
        _kernels.reset()


# ---- 2-d max and average pooling ----------------------------------------
@pytest.mark.parametrize("dtype,tol", DTYPES)
@pytest.mark.parametrize("kernel,stride,padding,dilation,ceil_mode", [
    (2, 2, 0, 1, False), (3, 2, 1, 1, True), ((3, 2), (1, 2), (1, 0), (2, 1), False)])
def test_pooling(dtype, tol, kernel, stride, padding, dilation, ceil_mode):
    rng = np.random.default_rng(2)
    xc, xg = pair((2, 3, 9, 10), rng, dtype)
    oc, ic = thnn.max_pool2d_forward(xc, kernel, stride, padding, dilation, ceil_mode)
    og, ig = k.max_pool2d_forward(xg, kernel, stride, padding, dilation, ceil_mode)
    same(oc, og, 0)
    same(ic, ig, 0)
    gc, gg = pair(tuple(oc.shape), rng, dtype)
    same(thnn.max_pool2d_backward_input(gc, xc.shape, ic),
         k.max_pool2d_backward_input(gg, xg.shape, ig), tol)
    if dilation == 1:
        for cip in (True, False):
            ac = thnn.avg_pool2d_forward(xc, kernel, stride, padding, ceil_mode, cip)
            same(ac, k.avg_pool2d_forward(xg, kernel, stride, padding, ceil_mode, cip), tol)
            gc, gg = pair(tuple(ac.shape), rng, dtype)
            same(thnn.avg_pool2d_backward_input(gc, xc.shape, kernel, stride, padding,
                                                ceil_mode, cip),
                 k.avg_pool2d_backward_input(gg, xg.shape, kernel, stride, padding, ceil_mode,
                                             cip), tol)
