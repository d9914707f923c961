"""ember.thcunn's layer_norm, group_norm and dropout against ember.thnn's
(the CPU kernels are the reference) on fresh random float64 and float32
data, their errors (the same exception and message as ember.thnn's), and
dropout's masks (which cannot equal the CPU's random values: their values,
rate, reproducibility per seed and gradients).  Runs on a GPU or on
libTHC's emulated device."""
import math

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


def host(t):
    return t.cpu().numpy() if isinstance(t, thc.Tensor) else t.numpy()


def same(cpu, gpu, tol):
    if cpu is None or gpu is None:
        assert cpu is None and gpu is None
        return
    c, g = cpu.numpy(), gpu.cpu().numpy()
    assert c.shape == g.shape and c.dtype == g.dtype, (c.shape, g.shape, c.dtype, g.dtype)
    assert np.allclose(c, g, rtol=tol, atol=tol), np.abs(c - g).max()


def same_error(cpu_call, gpu_call):
    """Both raise the same exception type with the same message."""
    with pytest.raises(Exception) as ec:
        cpu_call()
    with pytest.raises(Exception) as eg:
        gpu_call()
    assert type(eg.value) is type(ec.value), (ec.value, eg.value)
    assert str(eg.value) == str(ec.value)
    return str(eg.value)


# ---- layer norm ------------------------------------------------------------
LN_CASES = [((3, 4, 5), (5,)), ((3, 4, 5), (4, 5)), ((2, 3, 4, 5), (3, 4, 5)),
            ((7,), (7,)), ((6, 1), (1,)), ((0, 5), (5,)), ((2, 0, 3), (3,)),
            # long rows (or few): statistics and row sums by libTHC's reductions;
            # many short rows: the parameter gradients by them
            ((2, 4096), (4096,)), ((3, 5, 2048), (5, 2048)), ((3, 200), (200,)),
            ((300, 64), (64,))]


@pytest.mark.parametrize("dtype,tol", DTYPES)
@pytest.mark.parametrize("shape,nshape", LN_CASES)
@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm(dtype, tol, shape, nshape, affine):
    rng = np.random.default_rng(10)
    xc, xg = pair(shape, rng, dtype, -2, 3)
    wc, wg = pair(nshape, rng, dtype, 0.5, 1.5) if affine else (None, None)
    bc, bg = pair(nshape, rng, dtype) if affine else (None, None)
    outc = thnn.layer_norm_forward(xc, nshape, wc, bc, 1e-5)
    outg = k.layer_norm_forward(xg, nshape, wg, bg, 1e-5)
    for a, b in zip(outc, outg):
        same(a, b, tol)
    _, mc, sc = outc
    _, mg, sg = outg
    gc, gg = pair(shape, rng, dtype)
    same(thnn.layer_norm_backward_input(gc, xc, nshape, wc, mc, sc),
         k.layer_norm_backward_input(gg, xg, nshape, wg, mg, sg), tol)
    for nw, nb in ((True, True), (True, False), (False, True)):
        for a, b in zip(thnn.layer_norm_backward_params(gc, xc, nshape, mc, sc, nw, nb),
                        k.layer_norm_backward_params(gg, xg, nshape, mg, sg, nw, nb)):
            same(a, b, tol * 10)


def test_layer_norm_int_normalized_shape_and_eps():
    rng = np.random.default_rng(11)
    xc, xg = pair((4, 6), rng)
    for a, b in zip(thnn.layer_norm_forward(xc, 6, eps=0.5), k.layer_norm_forward(xg, 6, eps=0.5)):
        same(a, b, 1e-12)


@pytest.mark.parametrize("dtype,tol", DTYPES)
def test_layer_norm_non_contiguous(dtype, tol):
    rng = np.random.default_rng(12)
    xc, xg = pair((6, 4, 5), rng, dtype)
    xc, xg = xc.transpose(0, 2), xg.transpose(0, 2)   # (5, 4, 6), not contiguous
    assert not xg.is_contiguous()
    wc, wg = pair((4, 6), rng, dtype)
    gc, gg = pair((6, 4, 5), rng, dtype)
    gc, gg = gc.transpose(0, 2), gg.transpose(0, 2)
    oc, mc, sc = thnn.layer_norm_forward(xc, (4, 6), wc, None)
    og, mg, sg = k.layer_norm_forward(xg, (4, 6), wg, None)
    same(oc, og, tol)
    same(thnn.layer_norm_backward_input(gc, xc, (4, 6), wc, mc, sc),
         k.layer_norm_backward_input(gg, xg, (4, 6), wg, mg, sg), tol)
    for a, b in zip(thnn.layer_norm_backward_params(gc, xc, (4, 6), mc, sc),
                    k.layer_norm_backward_params(gg, xg, (4, 6), mg, sg)):
        same(a, b, tol * 10)


def test_layer_norm_float32_is_sound_for_a_large_mean():
    """float32 rows of mean 1000 and std 0.01: a one-pass float32 variance
    would lose every digit; against the float64 computation of the same
    float32 values."""
    rng = np.random.default_rng(13)
    a = (1000 + 0.01 * rng.standard_normal((8, 300))).astype("float32")
    out, mean, invstd = k.layer_norm_forward(thc.from_numpy(a), (300,), eps=0.0)
    ref, rmean, rinv = thnn.layer_norm_forward(th.from_numpy(a.astype("float64")), (300,),
                                               eps=0.0)
    assert np.allclose(host(out), host(ref), atol=1e-4)
    assert np.allclose(host(invstd), host(rinv), rtol=1e-5)
    assert np.allclose(host(mean), host(rmean), rtol=1e-6)


@pytest.mark.parametrize("shape,nshape", [((2, 4096), (4096,)), ((3, 300), (300,))])
def test_layer_norm_float32_long_rows_are_sound_for_a_large_mean(shape, nshape):
    rng = np.random.default_rng(11)
    a = (1000 + 0.05 * rng.standard_normal(shape)).astype("float32")
    g = rng.standard_normal(shape).astype("float32")
    out, mean, invstd = k.layer_norm_forward(thc.from_numpy(a), nshape, eps=0.0)
    ref, rmean, rinv = thnn.layer_norm_forward(th.from_numpy(a.astype("float64")), nshape,
                                               eps=0.0)
    assert np.allclose(host(out), host(ref), atol=1e-4)
    assert np.allclose(host(invstd), host(rinv), rtol=1e-5)
    assert np.allclose(host(mean), host(rmean), rtol=1e-6)
    gi = k.layer_norm_backward_input(thc.from_numpy(g), thc.from_numpy(a), nshape, None, mean,
                                     invstd)
    rgi = thnn.layer_norm_backward_input(th.from_numpy(g.astype("float64")),
                                         th.from_numpy(a.astype("float64")), nshape, None,
                                         rmean, rinv)
    assert np.allclose(host(gi), host(rgi), rtol=1e-3, atol=1e-2)


def test_layer_norm_errors_match_thnn():
    rng = np.random.default_rng(14)
    xc, xg = pair((3, 5), rng)
    wc, wg = pair((4,), rng)
    w32c, w32g = pair((5,), rng, "float32")
    gc, gg = pair((3, 4), rng)
    _, mc, sc = thnn.layer_norm_forward(xc, 5)
    _, mg, sg = k.layer_norm_forward(xg, 5)
    m2c, m2g = pair((2,), rng)
    ic = th.from_numpy(np.arange(15).reshape(3, 5))
    ig = thc.from_numpy(np.arange(15).reshape(3, 5))
    msg = same_error(lambda: thnn.layer_norm_forward(xc, (4,)),
                     lambda: k.layer_norm_forward(xg, (4,)))
    assert "[3, 5]" in msg
    msg = same_error(lambda: thnn.layer_norm_forward(xc, 5, wc),
                     lambda: k.layer_norm_forward(xg, 5, wg))
    assert "but got [4] for input [3, 5]" in msg
    same_error(lambda: thnn.layer_norm_forward(xc, 5, None, w32c),
               lambda: k.layer_norm_forward(xg, 5, None, w32g))
    msg = same_error(lambda: thnn.layer_norm_forward(ic, 5), lambda: k.layer_norm_forward(ig, 5))
    assert "Float or Double but found Long" in msg
    msg = same_error(lambda: thnn.layer_norm_backward_input(gc, xc, 5, None, mc, sc),
                     lambda: k.layer_norm_backward_input(gg, xg, 5, None, mg, sg))
    assert "grad_output [3, 4] does not match input [3, 5]" in msg
    msg = same_error(lambda: thnn.layer_norm_backward_input(xc, xc, 5, None, m2c, sc),
                     lambda: k.layer_norm_backward_input(xg, xg, 5, None, m2g, sg))
    assert "expected save_mean of shape [3] but got [2]" in msg
    same_error(lambda: thnn.layer_norm_backward_params(xc, xc, 5, mc, m2c),
               lambda: k.layer_norm_backward_params(xg, xg, 5, mg, m2g))
    same_error(lambda: thnn.layer_norm_backward_params(xc, xc, (4,), mc, sc),
               lambda: k.layer_norm_backward_params(xg, xg, (4,), mg, sg))
    with pytest.raises(TypeError, match="CUDA tensors"):
        k.layer_norm_forward(xc, 5)


# ---- group norm ------------------------------------------------------------
GN_CASES = [((2, 6, 5), 3), ((3, 4, 2, 3), 2), ((2, 4, 2, 3), 4), ((2, 4, 3), 1),
            ((5, 6), 2), ((2, 4, 2, 2, 2), 2), ((0, 4, 3), 2), ((2, 4, 0), 2),
            # large groups (or few): libTHC's reductions; long positions: the
            # parameter gradients by them too
            ((2, 4, 32, 32), 2), ((3, 6, 300), 3), ((2, 512, 3), 1), ((40, 8, 160), 2)]


@pytest.mark.parametrize("dtype,tol", DTYPES)
@pytest.mark.parametrize("shape,groups", GN_CASES)
@pytest.mark.parametrize("affine", [True, False])
def test_group_norm(dtype, tol, shape, groups, affine):
    rng = np.random.default_rng(20)
    c = shape[1]
    xc, xg = pair(shape, rng, dtype, -2, 3)
    wc, wg = pair((c,), rng, dtype, 0.5, 1.5) if affine else (None, None)
    bc, bg = pair((c,), rng, dtype) if affine else (None, None)
    outc = thnn.group_norm_forward(xc, groups, wc, bc, 1e-5)
    outg = k.group_norm_forward(xg, groups, wg, bg, 1e-5)
    for a, b in zip(outc, outg):
        same(a, b, tol)
    _, mc, rc = outc
    _, mg, rg = outg
    gc, gg = pair(shape, rng, dtype)
    same(thnn.group_norm_backward_input(gc, xc, groups, wc, mc, rc),
         k.group_norm_backward_input(gg, xg, groups, wg, mg, rg), tol)
    for nw, nb in ((True, True), (True, False), (False, True)):
        for a, b in zip(thnn.group_norm_backward_params(gc, xc, groups, mc, rc, nw, nb),
                        k.group_norm_backward_params(gg, xg, groups, mg, rg, nw, nb)):
            same(a, b, tol * 10)


def test_group_norm_many_samples_add_up():
    """grad_weight/grad_bias sum over many samples (added atomically on
    the device)."""
    rng = np.random.default_rng(21)
    xc, xg = pair((64, 6, 7), rng, "float64", -2, 3)
    _, mc, rc = thnn.group_norm_forward(xc, 3)
    _, mg, rg = k.group_norm_forward(xg, 3)
    gc, gg = pair((64, 6, 7), rng)
    for a, b in zip(thnn.group_norm_backward_params(gc, xc, 3, mc, rc),
                    k.group_norm_backward_params(gg, xg, 3, mg, rg)):
        same(a, b, 1e-10)


@pytest.mark.parametrize("dtype,tol", DTYPES)
def test_group_norm_non_contiguous(dtype, tol):
    rng = np.random.default_rng(22)
    xc, xg = pair((5, 4, 6), rng, dtype)
    xc, xg = xc.transpose(0, 2), xg.transpose(0, 2)   # (6, 4, 5)
    assert not xg.is_contiguous()
    wc, wg = pair((4,), rng, dtype)
    gc, gg = pair((5, 4, 6), rng, dtype)
    gc, gg = gc.transpose(0, 2), gg.transpose(0, 2)
    oc, mc, rc = thnn.group_norm_forward(xc, 2, wc)
    og, mg, rg = k.group_norm_forward(xg, 2, wg)
    same(oc, og, tol)
    same(thnn.group_norm_backward_input(gc, xc, 2, wc, mc, rc),
         k.group_norm_backward_input(gg, xg, 2, wg, mg, rg), tol)
    for a, b in zip(thnn.group_norm_backward_params(gc, xc, 2, mc, rc),
                    k.group_norm_backward_params(gg, xg, 2, mg, rg)):
        same(a, b, tol * 10)


def test_group_norm_float32_is_sound_for_a_large_mean():
    rng = np.random.default_rng(23)
    a = (-500 + 0.02 * rng.standard_normal((3, 4, 50))).astype("float32")
    out, _, rstd = k.group_norm_forward(thc.from_numpy(a), 2, eps=0.0)
    ref, _, rref = thnn.group_norm_forward(th.from_numpy(a.astype("float64")), 2, eps=0.0)
    assert np.allclose(host(out), host(ref), atol=1e-4)
    assert np.allclose(host(rstd), host(rref), rtol=1e-5)


def test_group_norm_float32_large_groups_are_sound_for_a_large_mean():
    rng = np.random.default_rng(24)
    a = (-500 + 0.02 * rng.standard_normal((2, 4, 1024))).astype("float32")
    out, _, rstd = k.group_norm_forward(thc.from_numpy(a), 2, eps=0.0)
    ref, _, rref = thnn.group_norm_forward(th.from_numpy(a.astype("float64")), 2, eps=0.0)
    assert np.allclose(host(out), host(ref), atol=1e-4)
    assert np.allclose(host(rstd), host(rref), rtol=1e-5)


def test_group_norm_errors_match_thnn():
    rng = np.random.default_rng(24)
    xc, xg = pair((2, 6, 3), rng)
    x1c, x1g = pair((6,), rng)
    wc, wg = pair((5,), rng)
    w32c, w32g = pair((6,), rng, "float32")
    gc, gg = pair((2, 6, 4), rng)
    _, mc, rc = thnn.group_norm_forward(xc, 3)
    _, mg, rg = k.group_norm_forward(xg, 3)
    m2c, m2g = pair((2, 2), rng)
    msg = same_error(lambda: thnn.group_norm_forward(xc, 4), lambda: k.group_norm_forward(xg, 4))
    assert "input of shape [2, 6, 3] and num_groups=4" in msg
    msg = same_error(lambda: thnn.group_norm_forward(xc, 0), lambda: k.group_norm_forward(xg, 0))
    assert "num_groups must be positive" in msg
    same_error(lambda: thnn.group_norm_forward(xc, -2), lambda: k.group_norm_forward(xg, -2))
    msg = same_error(lambda: thnn.group_norm_forward(x1c, 1), lambda: k.group_norm_forward(x1g, 1))
    assert "Expected at least 2 dimensions" in msg and "[6]" in msg
    msg = same_error(lambda: thnn.group_norm_forward(xc, 3, wc),
                     lambda: k.group_norm_forward(xg, 3, wg))
    assert "expected weight of shape [6] but got [5]" in msg
    same_error(lambda: thnn.group_norm_forward(xc, 3, None, w32c),
               lambda: k.group_norm_forward(xg, 3, None, w32g))
    msg = same_error(lambda: thnn.group_norm_backward_input(gc, xc, 3, None, mc, rc),
                     lambda: k.group_norm_backward_input(gg, xg, 3, None, mg, rg))
    assert "grad_output [2, 6, 4] (Double) does not match input [2, 6, 3] (Double)" in msg
    msg = same_error(lambda: thnn.group_norm_backward_input(xc, xc, 3, None, m2c, rc),
                     lambda: k.group_norm_backward_input(xg, xg, 3, None, m2g, rg))
    assert "expected save_mean of shape [2, 3] but got [2, 2]" in msg
    same_error(lambda: thnn.group_norm_backward_input(xc, xc, 3, None, None, rc),
               lambda: k.group_norm_backward_input(xg, xg, 3, None, None, rg))
    same_error(lambda: thnn.group_norm_backward_params(xc, xc, 3, mc, m2c),
               lambda: k.group_norm_backward_params(xg, xg, 3, mg, m2g))
    same_error(lambda: thnn.group_norm_backward_params(xc, xc, 3, mc, None),
               lambda: k.group_norm_backward_params(xg, xg, 3, mg, None))
    with pytest.raises(TypeError, match="CUDA tensors"):
        k.group_norm_forward(xg, 3, wc)


# ---- dropout ---------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("p", [0.2, 0.5, 0.9])
def test_dropout_mask_values_rate_and_output(dtype, p):
    rng = np.random.default_rng(30)
    _, xg = pair((200, 300), rng, dtype)
    out, mask = k.dropout_forward(xg, p)
    m, o, x = host(mask), host(out), host(xg)
    assert m.dtype == np.dtype(dtype) and m.shape == (200, 300)
    scale = np.array(1 / (1 - p), dtype=dtype)
    assert np.all((m == 0) | (m == scale))
    kept = np.mean(m != 0)
    assert abs(kept - (1 - p)) < 0.01, kept   # 60000 draws: sd below 0.0021
    assert np.array_equal(o, x * m)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_dropout_p0_keeps_and_p1_drops_everything(dtype):
    rng = np.random.default_rng(31)
    _, xg = pair((7, 11), rng, dtype)
    out, mask = k.dropout_forward(xg, 0.0)
    assert np.all(host(mask) == 1) and np.array_equal(host(out), host(xg))
    out, mask = k.dropout_forward(xg, 1.0)
    assert np.all(host(mask) == 0) and np.all(host(out) == 0)


def test_dropout_is_reproducible_per_seed():
    rng = np.random.default_rng(32)
    _, xg = pair((50, 40), rng)
    g = thc.Generator().manual_seed(1234)
    _, m1 = k.dropout_forward(xg, 0.5, g)
    _, m2 = k.dropout_forward(xg, 0.5, g)          # the generator moved on
    assert not np.array_equal(host(m1), host(m2))
    _, again = k.dropout_forward(xg, 0.5, thc.Generator().manual_seed(1234))
    assert np.array_equal(host(m1), host(again))
    _, other = k.dropout_forward(xg, 0.5, thc.Generator().manual_seed(4321))
    assert not np.array_equal(host(m1), host(other))
    # the default generator (None), through ember.thc.manual_seed
    thc.manual_seed(77)
    _, d1 = k.dropout_forward(xg, 0.3)
    thc.manual_seed(77)
    _, d2 = k.dropout_forward(xg, 0.3)
    assert np.array_equal(host(d1), host(d2))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_dropout_backward_is_grad_times_mask(dtype):
    rng = np.random.default_rng(33)
    _, xg = pair((9, 8), rng, dtype)
    _, gg = pair((9, 8), rng, dtype)
    _, mask = k.dropout_forward(xg, 0.4, thc.Generator().manual_seed(5))
    gi = k.dropout_backward_input(gg, mask)
    assert np.array_equal(host(gi), host(gg) * host(mask))
    # the CPU kernel gives the same on the same mask
    cpu = thnn.dropout_backward_input(th.from_numpy(host(gg)), th.from_numpy(host(mask)))
    assert np.array_equal(host(cpu), host(gi))


def test_dropout_non_contiguous_and_empty():
    rng = np.random.default_rng(34)
    _, xg = pair((6, 5), rng)
    xt = xg.t()
    assert not xt.is_contiguous()
    out, mask = k.dropout_forward(xt, 0.5)
    assert tuple(out.shape) == (5, 6)
    assert np.array_equal(host(out), host(xt) * host(mask))
    _, e = pair((0, 3), rng)
    out, mask = k.dropout_forward(e, 0.5)
    assert tuple(out.shape) == (0, 3) and tuple(mask.shape) == (0, 3)
    assert tuple(k.dropout_backward_input(e, mask).shape) == (0, 3)


@pytest.mark.parametrize("p", [-0.1, 1.5, float("nan")])
def test_dropout_bad_p_is_thnns_value_error(p):
    rng = np.random.default_rng(35)
    xc, xg = pair((3, 4), rng)
    msg = same_error(lambda: thnn.dropout_forward(xc, p), lambda: k.dropout_forward(xg, p))
    assert "dropout probability has to be between 0 and 1" in msg


def test_dropout_errors():
    rng = np.random.default_rng(36)
    ic = th.from_numpy(np.arange(6).reshape(2, 3))
    ig = thc.from_numpy(np.arange(6).reshape(2, 3))
    msg = same_error(lambda: thnn.dropout_forward(ic, 0.5), lambda: k.dropout_forward(ig, 0.5))
    assert "Float or Double but found Long" in msg
    same_error(lambda: thnn.dropout_backward_input(ic, ic),
               lambda: k.dropout_backward_input(ig, ig))
    _, xg = pair((2, 3), rng)
    with pytest.raises(TypeError, match="ember.thc Generator"):
        k.dropout_forward(xg, 0.5, th.Generator())
    xc, _ = pair((2, 3), rng)
    with pytest.raises(TypeError, match="CUDA tensors"):
        k.dropout_forward(xc, 0.5)


def test_the_functions_are_kernels():
    for name in ("layer_norm_forward", "layer_norm_backward_input", "layer_norm_backward_params",
                 "group_norm_forward", "group_norm_backward_input", "group_norm_backward_params",
                 "dropout_forward", "dropout_backward_input"):
        assert getattr(k.kernels, name) is getattr(k, name)
        assert callable(getattr(thnn, name))


# ---- through ember.nn ---------------------------------------------------------
@pytest.mark.parametrize("name,args", [("layer_norm", ((4, 5), 1e-5)), ("group_norm", (2, 1e-5))])
def test_nn_specs_drive_these_kernels(name, args):
    """ember.nn's one spec table calls these functions by name, with its
    arguments, as it calls ember.thnn's: the same outputs and gradients."""
    specs = pytest.importorskip("ember.nn.kernels")
    gpu, cpu = specs.specs_for(k.kernels), specs.specs_for(thnn.kernels)
    assert name in gpu
    rng = np.random.default_rng(41)
    xc, xg = pair((3, 4, 5), rng)
    wshape = (4, 5) if name == "layer_norm" else (4,)
    wc, wg = pair(wshape, rng, "float64", 0.5, 1.5)
    bc, bg = pair(wshape, rng)
    gc, gg = pair((3, 4, 5), rng)
    outc, ctxc = cpu[name].forward(xc, wc, bc, *args)
    outg, ctxg = gpu[name].forward(xg, wg, bg, *args)
    for a, b in zip(outc, outg):
        same(a, b, 1e-10)
    for needs in ((True, True, True), (False, True, False), (True, False, True)):
        for a, b in zip(cpu[name].backward(ctxc, gc, (xc, wc, bc), needs),
                        gpu[name].backward(ctxg, gg, (xg, wg, bg), needs)):
            same(a, b, 1e-10)


def test_nn_layers_on_cuda_match_the_cpu():
    ember = pytest.importorskip("ember")
    F = pytest.importorskip("ember.nn.functional")
    rng = np.random.default_rng(40)
    x = rng.standard_normal((3, 4, 5))
    w, b = rng.uniform(0.5, 1.5, (4, 5)), rng.standard_normal((4, 5))
    gw, gb = rng.uniform(0.5, 1.5, 4), rng.standard_normal(4)
    g = rng.standard_normal((3, 4, 5))
    grads = {}
    for dev in ("cpu", "cuda"):
        xs = ember.tensor(x, device=dev, requires_grad=True)
        ws, bs, gws, gbs = (ember.tensor(v, device=dev, requires_grad=True)
                            for v in (w, b, gw, gb))
        y = F.layer_norm(xs, (4, 5), ws, bs) * 2 + F.group_norm(xs, 2, gws, gbs)
        y.backward(ember.tensor(g, device=dev))
        grads[dev] = [t.detach().cpu().numpy() for t in (y, xs.grad, ws.grad, bs.grad,
                                                         gws.grad, gbs.grad)]
    for a, c in zip(grads["cpu"], grads["cuda"]):
        assert np.allclose(a, c, atol=1e-10)


# ---- batch_norm ----------------------------------------
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
