"""ember.thcunn's kernels against ember.thnn's (the CPU kernels are the
reference) on fresh random float64 and float32 data, their errors, and
ember.nn layers on CUDA tensors through them against the same layers on
the CPU.  Runs on a GPU or on libTHC's emulated device."""
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
    assert c.shape == g.shape and c.dtype == g.dtype
    assert np.allclose(c, g, rtol=tol, atol=tol), np.abs(c - g).max()


@pytest.mark.parametrize("dtype,tol", DTYPES)
@pytest.mark.parametrize("stride,padding,dilation,groups", [
    (1, 0, 1, 1), (2, 1, 1, 1), ((2, 1), (1, 2), (2, 1), 2), (1, 1, 1, 4)])
def test_conv2d(dtype, tol, stride, padding, dilation, groups):
    rng = np.random.default_rng(0)
    xc, xg = pair((3, 4, 9, 8), rng, dtype)
    wc, wg = pair((8, 4 // groups, 3, 3), rng, dtype)
    bc, bg = pair((8,), rng, dtype)
    out_c = thnn.conv2d_forward(xc, wc, bc, stride, padding, dilation, groups)
    out_g = k.conv2d_forward(xg, wg, bg, stride, padding, dilation, groups)
    same(out_c, out_g, tol)
    gc, gg = pair(tuple(out_c.shape), rng, dtype)
    same(thnn.conv2d_backward_input(gc, xc.shape, wc, stride, padding, dilation, groups),
         k.conv2d_backward_input(gg, xg.shape, wg, stride, padding, dilation, groups), tol)
    for a, b in zip(thnn.conv2d_backward_params(gc, xc, wc.shape, stride, padding, dilation,
                                                groups),
                    k.conv2d_backward_params(gg, xg, wg.shape, stride, padding, dilation,
                                             groups)):
        same(a, b, tol * 10)


def test_conv2d_errors_name_the_sizes():
    rng = np.random.default_rng(1)
    _, x = pair((2, 3, 5, 5), rng)
    _, w = pair((4, 2, 3, 3), rng)
    with pytest.raises(RuntimeError, match=r"expected input\[2, 3, 5, 5\] to have 2 channels"):
        k.conv2d_forward(x, w)
    _, wi = pair((4, 3, 3, 3), rng, "float32")
    with pytest.raises(RuntimeError, match="same dtype"):
        k.conv2d_forward(x, wi)


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


@pytest.mark.parametrize("dtype,tol", DTYPES)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax(dtype, tol, dim):
    rng = np.random.default_rng(3)
    xc, xg = pair((4, 5, 6), rng, dtype, -5, 5)
    gc, gg = pair((4, 5, 6), rng, dtype)
    for fwd, bwd in (("softmax_forward", "softmax_backward_input"),
                     ("log_softmax_forward", "log_softmax_backward_input")):
        yc, yg = getattr(thnn, fwd)(xc, dim), getattr(k, fwd)(xg, dim)
        same(yc, yg, tol)
        same(getattr(thnn, bwd)(gc, yc, dim), getattr(k, bwd)(gg, yg, dim), tol)


@pytest.mark.parametrize("dtype,tol", [("float64", 1e-10), ("float32", 1e-5)])
@pytest.mark.parametrize("shape,dim", [((3, 1500), 1), ((2, 1024), -1), ((1500, 3), 0),
                                       ((2, 300, 3), 1), ((1, 4, 2048), 2)])
def test_softmax_long_lines(dtype, tol, shape, dim):
    """Lines of >= 1024 (or >= 128, few of them) take libTHC's reductions
    along dim: -inf entries, large values (exp overflows without the max
    subtracted), forward and backward."""
    rng = np.random.default_rng(9)
    a = rng.uniform(-5, 5, size=shape).astype(dtype)
    a = np.moveaxis(a, dim, -1)            # a view: lines along the last axis
    a[..., 3] = -np.inf
    a[..., 10] = 30
    a.reshape(-1, a.shape[-1])[0] += 1e4   # a line of large values
    a = np.moveaxis(a, -1, dim)
    xc, xg = th.from_numpy(a.copy()), thc.from_numpy(a.copy())
    gc, gg = pair(shape, rng, dtype)
    for fwd, bwd in (("softmax_forward", "softmax_backward_input"),
                     ("log_softmax_forward", "log_softmax_backward_input")):
        yc, yg = getattr(thnn, fwd)(xc, dim), getattr(k, fwd)(xg, dim)
        assert np.isfinite(yc.numpy()).any()
        same(yc, yg, tol)
        same(getattr(thnn, bwd)(gc, yc, dim), getattr(k, bwd)(gg, yg, dim), tol)


@pytest.mark.parametrize("dtype,tol", DTYPES)
@pytest.mark.parametrize("groups", [1, 2, 4])
def test_conv2d_weight_gradient_of_a_large_batch(dtype, tol, groups):
    """Many samples in one chunk: their weight gradients summed by one
    product over the chunk's samples and positions."""
    rng = np.random.default_rng(5)
    xc, xg = pair((24, 8, 6, 5), rng, dtype)
    gc, gg = pair((24, 12, 6, 5), rng, dtype)
    for a, b in zip(thnn.conv2d_backward_params(gc, xc, (12, 8 // groups, 3, 3), 1, 1, 1, groups),
                    k.conv2d_backward_params(gg, xg, (12, 8 // groups, 3, 3), 1, 1, 1, groups)):
        same(a, b, tol * 10)


def test_conv2d_weight_gradient_temporaries_stay_near_the_columns():
    """The weight gradient's temporaries are about the columns' size, not
    one weight per sample (64 x 64 x 576 here)."""
    rng = np.random.default_rng(6)
    n, c, o, hw = 64, 64, 64, 4
    _, x = pair((n, c, hw, hw), rng)
    _, g = pair((n, o, hw, hw), rng)
    thc.synchronize()
    thc.reset_peak_memory_stats()
    base = thc.memory_allocated()
    k.conv2d_backward_params(g, x, (o, c, 3, 3), 1, 1, 1, 1, need_bias=False)
    peak = thc.max_memory_allocated() - base
    cols = n * c * 9 * hw * hw * 8
    per_sample_weights = n * o * c * 9 * 8
    assert peak < 3 * cols < per_sample_weights, (peak, cols)


@pytest.mark.parametrize("dtype,tol", DTYPES)
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_cross_entropy(dtype, tol, reduction):
    rng = np.random.default_rng(4)
    xc, xg = pair((6, 5), rng, dtype, -3, 3)
    t = rng.integers(0, 5, size=6)
    t[2] = -100
    tc, tg = th.from_numpy(t.copy()), thc.from_numpy(t.copy())
    wc, wg = pair((5,), rng, dtype, 0.5, 2)
    outc, lpc, twc = thnn.cross_entropy_forward(xc, tc, wc, reduction)
    outg, lpg, twg = k.cross_entropy_forward(xg, tg, wg, reduction)
    same(outc, outg, tol)
    same(twc, twg, tol)
    gc, gg = pair(tuple(outc.shape), rng, dtype)
    same(thnn.cross_entropy_backward_input(gc, lpc, tc, wc, twc, reduction),
         k.cross_entropy_backward_input(gg, lpg, tg, wg, twg, reduction), tol)


def test_nll_loss_bad_target_is_an_index_error():
    rng = np.random.default_rng(5)
    _, x = pair((3, 4), rng)
    with pytest.raises(IndexError, match="Target 9 is out of bounds"):
        k.nll_loss_forward(x, thc.from_numpy(np.array([0, 9, 1])))


def test_backward_kernels_refuse_mismatched_gradients():
    """More planes in grad_output than in grad_input (it would write past
    grad_input's end), or another dtype (it would be read as grad_input's)."""
    rng = np.random.default_rng(8)
    _, x = pair((2, 3, 6, 6), rng)
    out, idx = k.max_pool2d_forward(x, 2)
    with pytest.raises(RuntimeError, match="do not match grad_input"):
        k.max_pool2d_backward_input(out, (1, 3, 6, 6), idx)
    with pytest.raises(RuntimeError, match="do not match grad_input"):
        k.max_pool2d_backward_input(out, (2, 2, 6, 6), idx)
    grad_in = thc.zeros(2, 3, 6, 6, dtype=thc.float32)   # the C API takes any pair
    with pytest.raises(RuntimeError, match="do not match grad_input"):
        k._check(k._lib.thcunn_max_pool2d_backward_input(k._p(grad_in), k._p(out), k._p(idx)))
    _, lp = pair((3, 4), rng)
    t = thc.from_numpy(np.array([0, 3, 1]))
    _, tw = k.nll_loss_forward(lp, t)
    gi, go = thc.zeros(3, 4, dtype=thc.float64), thc.ones(1, dtype=thc.float32).reshape(())
    with pytest.raises(TypeError, match="expected grad_output of scalar type"):
        k._check(k._lib.thcunn_nll_loss_backward_input(k._p(gi), k._p(go), k._p(t), k.NULL,
                                                       k._p(tw), 1, -100))


@pytest.mark.parametrize("dtype,tol", DTYPES)
@pytest.mark.parametrize("training", [True, False])
def test_batch_norm(dtype, tol, training):
    rng = np.random.default_rng(6)
    xc, xg = pair((4, 3, 5, 2), rng, dtype, -2, 3)
    wc, wg = pair((3,), rng, dtype)
    bc, bg = pair((3,), rng, dtype)
    rmc, rmg = pair((3,), rng, dtype)
    rvc, rvg = pair((3,), rng, dtype, 0.5, 1.5)
    outc, mc, sc = thnn.batch_norm_forward(xc, wc, bc, rmc, rvc, training, 0.1, 1e-5)
    outg, mg, sg = k.batch_norm_forward(xg, wg, bg, rmg, rvg, training, 0.1, 1e-5)
    for a, b in ((outc, outg), (mc, mg), (sc, sg), (rmc, rmg), (rvc, rvg)):
        same(a, b, tol)
    gc, gg = pair((4, 3, 5, 2), rng, dtype)
    same(thnn.batch_norm_backward_input(gc, xc, wc, mc, sc, training),
         k.batch_norm_backward_input(gg, xg, wg, mg, sg, training), tol)
    for a, b in zip(thnn.batch_norm_backward_params(gc, xc, mc, sc),
                    k.batch_norm_backward_params(gg, xg, mg, sg)):
        same(a, b, tol)


@pytest.mark.parametrize("name,a,b", [
    ("relu", 0, 0), ("leaky_relu", 0.1, 0), ("elu", 1.0, 0), ("selu", 0, 0), ("gelu", 0, 0),
    ("gelu", 1, 0), ("silu", 0, 0), ("sigmoid", 0, 0), ("tanh", 0, 0), ("softplus", 2, 5),
    ("hardtanh", -0.5, 0.5), ("hardswish", 0, 0), ("mish", 0, 0)])
def test_activations(name, a, b):
    rng = np.random.default_rng(7)
    xc, xg = pair((7, 9), rng, "float64", -4, 4)
    gc, gg = pair((7, 9), rng, "float64")
    same(thnn.activation_forward(name, xc, a, b), k.activation_forward(name, xg, a, b), 1e-12)
    same(thnn.activation_backward_input(name, gc, xc, a, b),
         k.activation_backward_input(name, gg, xg, a, b), 1e-12)


def test_a_cpu_tensor_is_refused():
    rng = np.random.default_rng(8)
    xc, _ = pair((2, 3), rng)
    with pytest.raises((TypeError, RuntimeError)):
        k.softmax_forward(xc, 1)
