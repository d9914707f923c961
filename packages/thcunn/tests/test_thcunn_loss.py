"""ember.thcunn's pointwise losses, kl_div, margin_ranking_loss and
cosine_embedding_loss against ember.thnn's (the CPU kernels are the
reference) on fresh random float64 and float32 data: every loss kind and
reduction, weights and pos_weight, targets of the right kinds, strided and
empty inputs, and the errors (same type and message as ember.thnn).  Runs
on a GPU or on libTHC's emulated device."""
import re

import numpy as np
import pytest

import ember.th as th
import ember.thc as thc
import ember.thcunn as k

thnn = pytest.importorskip("ember.thnn", reason="the CPU kernels (ember-thnn) are the reference")

pytestmark = pytest.mark.needs_device
DTYPES = [("float64", 1e-10), ("float32", 1e-4)]
REDUCTIONS = ["none", "mean", "sum"]
POINTWISE = ["mse", "l1", "smooth_l1", "huber", "bce", "bce_with_logits"]


# ---- helpers --------------------------------------------------------------------------
def tensor(mod, a, strided=False):
    """A NumPy array as an ember.th (mod thnn) or ember.thc tensor; strided:
    a non-contiguous view (first and last dims transposed) of the same
    values.  Anything else passes through."""
    if isinstance(a, np.generic):   # NumPy's 0-d results
        a = np.asarray(a)
    if not isinstance(a, np.ndarray):
        return a
    lib = th if mod is thnn else thc
    if strided and a.ndim >= 2:
        base = np.ascontiguousarray(np.swapaxes(a, 0, -1))
        t = lib.from_numpy(base).transpose(0, a.ndim - 1)
        assert not t.is_contiguous()
        return t
    return lib.from_numpy(a.copy())


def both(name, *args, strided=(), **kw):
    """ember.thnn's and ember.thcunn's `name` on the same arguments (NumPy
    arrays become tensors; the positions in `strided` become strided views)."""
    return [getattr(mod, name)(*[tensor(mod, a, i in strided) for i, a in enumerate(args)],
                               **{key: tensor(mod, v) for key, v in kw.items()})
            for mod in (thnn, k)]


def same(cpu, gpu, tol):
    if isinstance(cpu, tuple):
        assert isinstance(gpu, tuple) and len(cpu) == len(gpu)
        for c, g in zip(cpu, gpu):
            same(c, g, tol)
        return
    if cpu is None:
        assert gpu is None
        return
    assert isinstance(gpu, thc.Tensor)
    c, g = cpu.numpy(), gpu.cpu().numpy()
    assert c.shape == g.shape and c.dtype == g.dtype, (c.shape, g.shape, c.dtype, g.dtype)
    assert np.allclose(c, g, rtol=tol, atol=tol, equal_nan=True), np.abs(c - g).max()


def same_error(name, *args, match, **kw):
    """Both packages raise the same exception type with the same message,
    which matches `match`."""
    errors = []
    for mod in (thnn, k):
        with pytest.raises(Exception) as info:
            getattr(mod, name)(*[tensor(mod, a) for a in args],
                               **{key: tensor(mod, v) for key, v in kw.items()})
        errors.append(info.value)
    assert type(errors[0]) is type(errors[1]), errors
    assert str(errors[0]) == str(errors[1])
    assert re.search(match, str(errors[1])), str(errors[1])
    return errors[1]


def grad_for(out, rng, dtype):
    """A random grad_output shaped like `out` (0-d for mean/sum)."""
    return rng.uniform(-1.5, 1.5, size=tuple(out.shape)).astype(dtype)


def pointwise_data(loss, shape, rng, dtype, probs=False):
    """input and target of the right kinds: probabilities in (0, 1) for
    bce's input, 0/1 or probability targets for the bce losses."""
    if loss == "bce":
        x = rng.uniform(0.02, 0.98, shape)
    elif loss == "bce_with_logits":
        x = rng.normal(0, 2, shape)
    else:
        x = rng.normal(0, 1, shape)
    if loss in ("bce", "bce_with_logits"):
        y = rng.uniform(0, 1, shape) if probs else rng.integers(0, 2, shape).astype(float)
    else:
        y = rng.normal(0, 1, shape)
    return x.astype(dtype), y.astype(dtype)


# ---- pointwise losses -------------------------------------------------------------------
@pytest.mark.parametrize("dtype,tol", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("loss,a", [("mse", 1.0), ("l1", 1.0), ("smooth_l1", 0.5),
                                    ("smooth_l1", 0.0), ("huber", 0.7), ("huber", 2.0),
                                    ("bce", 1.0), ("bce_with_logits", 1.0)])
@pytest.mark.parametrize("weighted", [False, True])
def test_pointwise_loss(dtype, tol, reduction, loss, a, weighted):
    rng = np.random.default_rng(100)
    shape = (4, 6)
    x, y = pointwise_data(loss, shape, rng, dtype, probs=weighted)
    w = rng.uniform(0.3, 2.0, shape).astype(dtype) if weighted else None
    pw = rng.uniform(0.3, 3.0, shape[-1]).astype(dtype) if weighted else None
    outc, outg = both("pointwise_loss_forward", loss, x, y, w, pw, reduction, a,
                      strided=(1, 2, 3))
    same(outc, outg, tol)
    if reduction != "none":
        assert tuple(outg.shape) == ()
    gy = grad_for(outc, rng, dtype)
    same(*both("pointwise_loss_backward_input", loss, gy, x, y, w, pw, reduction, a,
               strided=(1, 2, 3, 4)), tol)
    # keyword form, the defaults (mean, a=1)
    same(*both("pointwise_loss_forward", loss, x, y, weight=w, pos_weight=pw), tol)


@pytest.mark.parametrize("loss", POINTWISE)
@pytest.mark.parametrize("shape", [(), (7,), (2, 3, 5), (0,), (3, 0, 2)])
def test_pointwise_loss_shapes(loss, shape):
    """0-d, 1-d, 3-d and empty inputs; the mean of nothing is NaN."""
    rng = np.random.default_rng(101)
    x, y = pointwise_data(loss, shape, rng, "float64")
    pw = rng.uniform(0.5, 2.0, shape[-1] if shape else 1)
    for reduction in REDUCTIONS:
        outc, outg = both("pointwise_loss_forward", loss, x, y, None, pw, reduction, 0.6)
        same(outc, outg, 1e-10)
        if reduction == "mean" and not x.size:
            assert np.isnan(outg.cpu().numpy())
        gy = grad_for(outc, rng, "float64")
        same(*both("pointwise_loss_backward_input", loss, gy, x, y, None, pw, reduction, 0.6),
             1e-10)


def test_pointwise_loss_large_and_inputs_untouched():
    """More elements than one block of threads; the inputs stay as they were."""
    rng = np.random.default_rng(102)
    x, y = pointwise_data("bce_with_logits", (70, 300), rng, "float32", probs=True)
    xg, yg = thc.from_numpy(x.copy()), thc.from_numpy(y.copy())
    for reduction in REDUCTIONS:
        same(thnn.pointwise_loss_forward("bce_with_logits", th.from_numpy(x), th.from_numpy(y),
                                         reduction=reduction),
             k.pointwise_loss_forward("bce_with_logits", xg, yg, reduction=reduction), 1e-4)
    assert np.array_equal(xg.cpu().numpy(), x) and np.array_equal(yg.cpu().numpy(), y)


def test_pointwise_loss_errors():
    rng = np.random.default_rng(103)
    x, y = rng.normal(size=(3, 4)), rng.normal(size=(3, 4))
    same_error("pointwise_loss_forward", "mse", rng.normal(size=3), rng.normal(size=4),
               match=r"target size \(\[4\]\) that is different to the input size \(\[3\]\)")
    same_error("pointwise_loss_forward", "hinge", x, y, match="unknown pointwise loss 'hinge'")
    same_error("pointwise_loss_forward", "mse", x, y, reduction="batchmean",
               match="batchmean is not a valid value for reduction")
    same_error("pointwise_loss_forward", "bce", np.array([0.5, 1.5]), np.array([1.0, 0.0]),
               match="all elements of input should be between 0 and 1")
    same_error("pointwise_loss_forward", "bce", np.array([0.5, np.nan]), np.array([1.0, 0.0]),
               reduction="none", match="between 0 and 1")
    same_error("pointwise_loss_forward", "mse", x, y.astype(np.float32),
               match="expected target of scalar type Double but found Float")
    same_error("pointwise_loss_forward", "mse", x.astype(np.int64), y,
               match="expected input of scalar type Float or Double but found Long")
    same_error("pointwise_loss_forward", "mse", x, y, rng.normal(size=(3, 5)),
               match=r"weight \[3, 5\] must have the input's shape \[3, 4\]")
    same_error("pointwise_loss_forward", "bce_with_logits", x, y, None, rng.normal(size=3),
               match=r"pos_weight must have 4 elements \(the input's last dim\) but has 3")
    same_error("pointwise_loss_forward", "huber", x, y, a=0.0,
               match="huber_loss does not support non-positive values for delta")
    same_error("pointwise_loss_forward", "smooth_l1", x, y, a=-1.0,
               match="beta / delta must be non-negative, got -1")
    same_error("pointwise_loss_backward_input", "mse", rng.normal(size=(3, 4)), x, y,
               match="expected grad_output of 1 elements of type Double")
    same_error("pointwise_loss_backward_input", "l1", rng.normal(size=5), x, y,
               reduction="none", match="expected grad_output of 12 elements")


def test_a_cpu_tensor_is_refused():
    x = th.from_numpy(np.random.default_rng(104).normal(size=(2, 3)))
    with pytest.raises(TypeError, match="CUDA tensors"):
        k.pointwise_loss_forward("mse", x, x)
    with pytest.raises(TypeError, match="CUDA tensors"):
        k.kl_div_forward(x, x)


def test_c_output_checks():
    """The C functions check the outputs they are given (the bindings
    allocate them right), with libTHNN's messages."""
    lib_c, lib_g = thnn._lib, k._lib
    rng = np.random.default_rng(105)
    x = rng.normal(size=(3, 4))
    xc, xg = th.from_numpy(x.copy()), thc.from_numpy(x.copy())
    bad = [(th.empty(3, 5, dtype=th.float64), thc.empty((3, 5), dtype=thc.float64)),
           (th.empty(3, 4, dtype=th.float32), thc.empty((3, 4), dtype=thc.float32)),
           (th.empty(4, 3, dtype=th.float64).transpose(0, 1),
            thc.empty((4, 3), dtype=thc.float64).transpose(0, 1))]
    for oc, og in bad:
        rc_c = lib_c.thnn_pointwise_loss_forward(oc._p, xc._p, xc._p, thnn.NULL, thnn.NULL, 0,
                                                 0, 1.0)
        msg_c = thnn._ffi.string(lib_c.thnn_last_error()).decode()
        rc_g = lib_g.thcunn_pointwise_loss_forward(og._p, xg._p, xg._p, k.NULL, k.NULL, 0, 0,
                                                   1.0)
        msg_g = k._ffi.string(lib_g.thcunn_last_error()).decode()
        assert rc_c == rc_g != 0 and msg_c == msg_g, (msg_c, msg_g)
    # a reduced loss wants a 0-d output; a NULL input is a ValueError
    assert lib_g.thcunn_kl_div_forward(bad[0][1]._p, xg._p, xg._p, 1, 0) != 0
    assert "expected output of shape [] but got [3, 5]" in \
        k._ffi.string(lib_g.thcunn_last_error()).decode()
    assert lib_g.thcunn_margin_ranking_loss_forward(bad[0][1]._p, k.NULL, xg._p, xg._p, 0.0,
                                                    0) == 1
    assert "input1 must not be NULL" in k._ffi.string(lib_g.thcunn_last_error()).decode()
    assert lib_g.thcunn_pointwise_loss_forward(xg._p, xg._p, xg._p, k.NULL, k.NULL, 6, 0,
                                               1.0) == 1
    assert "unknown loss 6" in k._ffi.string(lib_g.thcunn_last_error()).decode()


# ---- kl_div -----------------------------------------------------------------------------
@pytest.mark.parametrize("dtype,tol", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("log_target", [False, True])
@pytest.mark.parametrize("shape", [(3, 4, 5), (6,), ()])
def test_kl_div(dtype, tol, reduction, log_target, shape):
    rng = np.random.default_rng(110)
    x = np.log(rng.uniform(0.05, 1, shape)).astype(dtype)   # log-probabilities
    if log_target:
        t = np.log(rng.uniform(0.05, 1, shape)).astype(dtype)
    else:
        t = rng.uniform(0, 1, shape).astype(dtype)
        if t.ndim:
            t.flat[0] = 0.0                                      # a zero target gives 0
    outc, outg = both("kl_div_forward", x, t, reduction, log_target, strided=(0, 1))
    same(outc, outg, tol)
    gy = grad_for(outc, rng, dtype)
    for need_input, need_target in ((True, False), (True, True), (False, True), (False, False)):
        same(*both("kl_div_backward_input", gy, x, t, reduction, log_target,
                   need_input=need_input, need_target=need_target, strided=(1, 2)), tol)


def test_kl_div_negative_target_and_empty():
    rng = np.random.default_rng(111)
    x, t = rng.normal(size=(2, 3)), rng.uniform(0.1, 1, (2, 3))
    t[1, 2] = -0.5                                               # its log: NaN
    for reduction in REDUCTIONS:
        outc, outg = both("kl_div_forward", x, t, reduction)
        same(outc, outg, 1e-10)
        assert np.isnan(outg.cpu().numpy()).any()
    e = np.zeros((0, 3))
    for reduction in REDUCTIONS:
        same(*both("kl_div_forward", e, e, reduction), 0)
        same(*both("kl_div_backward_input", grad_for(thnn.kl_div_forward(
            th.from_numpy(e), th.from_numpy(e), reduction), rng, "float64"), e, e, reduction,
            need_target=True), 0)


def test_kl_div_errors():
    rng = np.random.default_rng(112)
    x = rng.normal(size=(3, 4))
    same_error("kl_div_forward", x, rng.normal(size=(4, 3)),
               match=r"kl_div: target \[4, 3\] and input \[3, 4\] must have the same shape")
    same_error("kl_div_forward", x, x.astype(np.float32),
               match="expected target of scalar type Double but found Float")
    same_error("kl_div_forward", x, x, "batchmean", match="not a valid value for reduction")
    same_error("kl_div_backward_input", rng.normal(size=(3, 4)), x, x, "mean",
               match=r"expected grad_output of 1 elements of scalar type Double but got "
                     r"\[3, 4\] \(Double\)")
    same_error("kl_div_backward_input", rng.normal(size=(2,)), x, x, "none",
               match="expected grad_output of 12 elements")


# ---- margin_ranking_loss ------------------------------------------------------------------
@pytest.mark.parametrize("dtype,tol", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("margin", [0.0, 0.4])
@pytest.mark.parametrize("shape", [(5, 6), (9,), ()])
def test_margin_ranking_loss(dtype, tol, reduction, margin, shape):
    rng = np.random.default_rng(120)
    a, b = rng.normal(size=shape).astype(dtype), rng.normal(size=shape).astype(dtype)
    y = np.where(rng.uniform(size=shape) < 0.5, -1.0, 1.0).astype(dtype)   # +-1 targets
    outc, outg = both("margin_ranking_loss_forward", a, b, y, margin, reduction,
                      strided=(0, 1, 2))
    same(outc, outg, tol)
    gy = grad_for(outc, rng, dtype)
    for need in ((True, True), (True, False), (False, True)):
        same(*both("margin_ranking_loss_backward_input", gy, a, b, y, margin, reduction,
                   need_input1=need[0], need_input2=need[1], strided=(0, 1, 3)), tol)


def test_margin_ranking_loss_empty_and_errors():
    rng = np.random.default_rng(121)
    e = np.zeros((0, 4))
    for reduction in REDUCTIONS:
        same(*both("margin_ranking_loss_forward", e, e, e, 0.1, reduction), 0)
    assert np.isnan(k.margin_ranking_loss_forward(*[thc.from_numpy(e)] * 3, 0.0,
                                                  "mean").cpu().numpy())
    x = rng.normal(size=(3, 4))
    same_error("margin_ranking_loss_forward", x, rng.normal(size=(3, 5)), x,
               match=r"input2 \[3, 5\] and input1 \[3, 4\] must have the same shape")
    same_error("margin_ranking_loss_forward", x, x, rng.normal(size=(4,)),
               match=r"target \[4\] and input1 \[3, 4\] must have the same shape")
    same_error("margin_ranking_loss_forward", x, x.astype(np.float32), x,
               match="expected input2 of scalar type Double but found Float")
    same_error("margin_ranking_loss_backward_input", rng.normal(size=(2,)), x, x, x, 0.0,
               "sum", match="expected grad_output of 1 elements")


# ---- cosine_embedding_loss -----------------------------------------------------------------
@pytest.mark.parametrize("dtype,tol", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("margin", [0.0, -0.3, 0.2])
@pytest.mark.parametrize("batched", [True, False])
def test_cosine_embedding_loss(dtype, tol, reduction, margin, batched):
    rng = np.random.default_rng(130)
    shape = (7, 5) if batched else (5,)
    a, b = rng.normal(size=shape).astype(dtype), rng.normal(size=shape).astype(dtype)
    if batched:
        y = np.array([1, -1, -1, 1, -1, 1, 0], dtype=dtype)     # 0: another target, loss 0
        b[2] = a[2] * 2 + 0.1                                   # cos near 1, above the margin
        a[4] = 0                                                # a zero row (eps keeps cos 0)
    else:
        y = np.array(-1.0, dtype=dtype)
        b = (a + 0.2 * b).astype(dtype)
    outc, outg = both("cosine_embedding_loss_forward", a, b, y, margin, reduction,
                      strided=(0, 1))
    same(outc, outg, tol)
    gy = grad_for(outc, rng, dtype)
    for need in ((True, True), (True, False), (False, True)):
        same(*both("cosine_embedding_loss_backward_input", gy, a, b, y, margin, reduction,
                   need_input1=need[0], need_input2=need[1], strided=(1, 2)), tol)


def test_cosine_embedding_loss_long_rows_and_empty():
    rng = np.random.default_rng(131)
    a, b = rng.normal(size=(3, 700)), rng.normal(size=(3, 700))
    y = np.array([1.0, -1.0, 1.0])
    for reduction in REDUCTIONS:
        outc, outg = both("cosine_embedding_loss_forward", a, b, y, -0.1, reduction)
        same(outc, outg, 1e-10)
        same(*both("cosine_embedding_loss_backward_input", grad_for(outc, rng, "float64"),
                   a, b, y, -0.1, reduction), 1e-10)
    e, ey = np.zeros((0, 4)), np.zeros(0)
    for reduction in REDUCTIONS:
        same(*both("cosine_embedding_loss_forward", e, e, ey, 0.0, reduction), 0)
    z, zy = np.zeros((2, 0)), np.array([1.0, -1.0])                # D = 0: cos 0
    same(*both("cosine_embedding_loss_forward", z, z, zy, -0.5, "none"), 0)


def test_cosine_embedding_loss_errors():
    rng = np.random.default_rng(132)
    x = rng.normal(size=(3, 4))
    same_error("cosine_embedding_loss_forward", x, x, rng.normal(size=4),
               match=r"expected target of shape \[3\] for inputs \[3, 4\], but got target \[4\]")
    same_error("cosine_embedding_loss_forward", x[0], x[0], rng.normal(size=1),
               match=r"expected a 0-d target for inputs \[4\], but got target \[1\]")
    same_error("cosine_embedding_loss_forward", rng.normal(size=(2, 2, 2)),
               rng.normal(size=(2, 2, 2)), rng.normal(size=(2, 2)),
               match=r"expects 2D input tensors.*got input1 \[2, 2, 2\]")
    same_error("cosine_embedding_loss_forward", x, x, np.ones(3, dtype=np.float32),
               match="expected target of scalar type Double but found Float")
    same_error("cosine_embedding_loss_forward", x, x, np.ones(3, dtype=np.int64),
               match="expected target of scalar type Float or Double but found Long")
    same_error("cosine_embedding_loss_forward", x, rng.normal(size=(3, 5)), np.ones(3),
               match=r"input2 \[3, 5\] and input1 \[3, 4\] must have the same shape")
    same_error("cosine_embedding_loss_backward_input", rng.normal(size=(4,)), x, x,
               np.ones(3), 0.0, "none", match="expected grad_output of 3 elements")


def pair(shape, rng, dtype="float64", low=-1.0, high=1.0):
    """The same random values as an ember.th and an ember.thc tensor."""
    a = rng.uniform(low, high, size=shape).astype(dtype)
    return th.from_numpy(a.copy()), thc.from_numpy(a.copy())


# ---- nll_loss and cross_entropy ----------------------------------------
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
