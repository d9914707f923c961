"""ember.thnn's losses (nll / cross-entropy, pointwise, kl_div,
margin_ranking, cosine_embedding): values against NumPy, backward, bad input."""

import numpy as np
import pytest

import ember.th as th
import ember.thnn as nn

from thnn_testing import N, T, TOL, fd_check, strided


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("shape", [(5, 4), (3, 4, 2, 3)])
def test_nll_and_cross_entropy(reduction, weighted, shape):
    rng = np.random.default_rng(6)
    x = rng.standard_normal(shape)
    tshape = (shape[0],) + shape[2:]
    t = rng.integers(0, shape[1], tshape).astype(np.int64)
    t.flat[0] = -100  # ignored
    w = rng.uniform(0.5, 2, shape[1]) if weighted else None
    wt = T(w) if weighted else None
    out, tw = nn.nll_loss_forward(T(x), T(t), wt, reduction)
    tc = np.where(t == -100, 0, t)
    picked = np.take_along_axis(x, tc[:, None], 1)[:, 0]
    ww = (w[tc] if weighted else np.ones_like(picked)) * (t != -100)
    ref = -picked * ww
    if reduction == "mean":
        ref = ref.sum() / ww.sum()
    elif reduction == "sum":
        ref = ref.sum()
    np.testing.assert_allclose(N(out), ref, rtol=1e-12)

    f = lambda x: N(nn.nll_loss_forward(T(x), T(t), wt, reduction)[0])
    fd_check(f, [x], lambda gy: [N(nn.nll_loss_backward_input(
        T(np.asarray(gy)), x.shape, T(t), wt, tw, reduction))])

    def ce(x):
        return N(nn.cross_entropy_forward(T(x), T(t), wt, reduction)[0])

    def ce_bwd(gy):
        _, lp, tw = nn.cross_entropy_forward(T(x), T(t), wt, reduction)
        return [N(nn.cross_entropy_backward_input(T(np.asarray(gy)), lp, T(t), wt, tw, reduction))]
    fd_check(ce, [x], ce_bwd)


def test_nll_bad_input():
    x = th.randn(3, 4)
    with pytest.raises(IndexError, match="Target 7 is out of bounds."):
        nn.nll_loss_forward(x, th.tensor([0, 7, 1]))
    with pytest.raises(RuntimeError, match="expected scalar type Long but found Float"):
        nn.nll_loss_forward(x, th.tensor([0.0, 1.0, 1.0]))
    with pytest.raises(ValueError, match=r"Expected input batch_size \(3\) to match target batch_size \(2\)"):
        nn.nll_loss_forward(x, th.tensor([0, 1]))
    with pytest.raises(ValueError, match="not a valid value for reduction"):
        nn.nll_loss_forward(x, th.tensor([0, 1, 2]), reduction="avg")


def _pw_ref(loss, x, y, a, pw):
    r = x - y
    if loss == "mse":
        return r * r
    if loss == "l1":
        return np.abs(r)
    if loss == "smooth_l1":
        return np.where(np.abs(r) < a, 0.5 * r * r / a, np.abs(r) - 0.5 * a)
    if loss == "huber":
        return np.where(np.abs(r) <= a, 0.5 * r * r, a * (np.abs(r) - 0.5 * a))
    if loss == "bce":
        return -(y * np.log(x) + (1 - y) * np.log1p(-x))
    ls = lambda v: -np.logaddexp(0, -v)
    return -((pw if pw is not None else 1) * y * ls(x) + (1 - y) * ls(-x))


@pytest.mark.parametrize("loss", ["mse", "l1", "smooth_l1", "huber", "bce", "bce_with_logits"])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("weighted", [False, True])
def test_pointwise_losses(loss, reduction, weighted):
    rng = np.random.default_rng(13)
    shape = (4, 5)
    if loss == "bce":
        x, y = rng.uniform(0.05, 0.95, shape), rng.uniform(0, 1, shape)
    else:
        x, y = rng.standard_normal(shape), rng.standard_normal(shape)
        if loss == "bce_with_logits":
            y = rng.uniform(0, 1, shape)
    w = rng.uniform(0.5, 2, shape) if weighted else None
    pw = rng.uniform(0.5, 2, shape[-1]) if loss == "bce_with_logits" and weighted else None
    Tn = (lambda a: None if a is None else T(a))
    a = 0.7
    out = N(nn.pointwise_loss_forward(loss, T(x), T(y), Tn(w), Tn(pw), reduction, a))
    ref = _pw_ref(loss, x, y, a, pw) * (w if weighted else 1)
    ref = ref.mean() if reduction == "mean" else ref.sum() if reduction == "sum" else ref
    np.testing.assert_allclose(out, ref, rtol=1e-10, atol=1e-12)
    # away from the kinks of l1 / smooth_l1 / huber for the FD check
    f = lambda x: N(nn.pointwise_loss_forward(loss, T(x), T(y), Tn(w), Tn(pw), reduction, a))
    fd_check(f, [x], lambda gy: [N(nn.pointwise_loss_backward_input(
        loss, T(np.asarray(gy)), T(x), T(y), Tn(w), Tn(pw), reduction, a))])


def test_pointwise_loss_bad_input():
    with pytest.raises(ValueError, match="different to the input size"):
        nn.pointwise_loss_forward("mse", th.randn(3), th.randn(4))
    with pytest.raises(RuntimeError, match="between 0 and 1"):
        nn.pointwise_loss_forward("bce", th.tensor([1.5]), th.tensor([1.0]))
    with pytest.raises(ValueError, match="unknown pointwise loss"):
        nn.pointwise_loss_forward("hinge", th.randn(3), th.randn(3))


# ---- losses ----------------------------------------------------------------------
def reduce_ref(l, reduction):
    return l if reduction == "none" else l.mean() if reduction == "mean" else l.sum()


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("log_target", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_kl_div(reduction, log_target, dtype):
    rng = np.random.default_rng(28)
    x = rng.standard_normal((3, 4, 2)).astype(dtype)
    t = rng.standard_normal((3, 4, 2)) if log_target else rng.uniform(0, 1, (3, 4, 2))
    if not log_target:
        t[0, 0, 0] = 0.0                     # a zero target contributes 0
    t = t.astype(dtype)
    x64, t64 = x.astype(np.float64), t.astype(np.float64)
    if log_target:
        ref = np.exp(t64) * (t64 - x64)
    else:
        ref = np.where(t64 > 0, t64 * (np.log(np.where(t64 > 0, t64, 1)) - x64), 0)
    y = N(nn.kl_div_forward(strided(x), strided(t), reduction, log_target))
    np.testing.assert_allclose(y, reduce_ref(ref, reduction), rtol=TOL[dtype] * 10,
                               atol=TOL[dtype] * 10)

    # finite differences of the target need it away from 0 (log)
    t_fd = t64 if log_target else t64 + 0.05
    fd_check(lambda x, t: N(nn.kl_div_forward(T(x), T(t), reduction, log_target)),
             [x64, t_fd],
             lambda gy: [N(g) for g in nn.kl_div_backward_input(
                 T(np.asarray(gy)), T(x64), T(t_fd), reduction, log_target, need_target=True)])


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_margin_ranking_loss(reduction, dtype):
    rng = np.random.default_rng(29)
    a, b = rng.standard_normal((4, 5)).astype(dtype), rng.standard_normal((4, 5)).astype(dtype)
    y = np.sign(rng.standard_normal((4, 5))).astype(dtype)
    ref = np.maximum(0, -y * (a - b).astype(np.float64) + 0.3)
    out = N(nn.margin_ranking_loss_forward(strided(a), T(b), strided(y), 0.3, reduction))
    np.testing.assert_allclose(out, reduce_ref(ref, reduction), rtol=TOL[dtype] * 10,
                               atol=TOL[dtype] * 10)
    a64, b64, y64 = (v.astype(np.float64) for v in (a, b, y))
    fd_check(lambda a, b: N(nn.margin_ranking_loss_forward(T(a), T(b), T(y64), 0.3, reduction)),
             [a64, b64],
             lambda gy: [N(g) for g in nn.margin_ranking_loss_backward_input(
                 T(np.asarray(gy)), T(a64), T(b64), T(y64), 0.3, reduction)])


def cosine_ref(a, b, y, margin):
    dot = (a * b).sum(-1)
    cos = dot / np.sqrt(((a * a).sum(-1) + 1e-12) * ((b * b).sum(-1) + 1e-12))
    return np.where(y == 1, 1 - cos, np.where(y == -1, np.maximum(cos - margin, 0), 0))


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("batched", [True, False])
def test_cosine_embedding_loss(reduction, dtype, batched):
    rng = np.random.default_rng(30)
    shape = (6, 4) if batched else (4,)
    a, b = rng.standard_normal(shape).astype(dtype), rng.standard_normal(shape).astype(dtype)
    y = (np.array([1, -1, -1, 1, -1, 1]) if batched else np.array(-1)).astype(dtype)
    b[..., 0] = np.abs(b[..., 0]) + 3 * np.abs(a[..., 0])  # keep some cos above the margin
    a[..., 0] = np.abs(a[..., 0]) + 1
    ref = cosine_ref(a.astype(np.float64), b.astype(np.float64), y, -0.2)
    ty = T(y) if batched else th.from_numpy(y)          # keeps the 0-d shape
    out = N(nn.cosine_embedding_loss_forward(strided(a), strided(b), ty, -0.2, reduction))
    np.testing.assert_allclose(out, reduce_ref(ref, reduction), rtol=TOL[dtype] * 10,
                               atol=TOL[dtype] * 10)
    a64, b64, y64 = (v.astype(np.float64) for v in (a, b, y))
    ty = T(y64) if batched else th.from_numpy(y64)
    fd_check(lambda a, b: N(nn.cosine_embedding_loss_forward(T(a), T(b), ty, -0.2, reduction)),
             [a64, b64],
             lambda gy: [N(g) for g in nn.cosine_embedding_loss_backward_input(
                 th.from_numpy(np.array(gy)), T(a64), T(b64), ty, -0.2, reduction)])


def test_losses_empty_and_bad_input():
    e = th.empty(0, 3, dtype=th.float64)
    assert N(nn.kl_div_forward(e, e, "sum")) == 0
    assert np.isnan(N(nn.margin_ranking_loss_forward(e, e, e, 0.0, "mean")))
    x, t = th.randn(3, 4), th.randn(4, 3)
    with pytest.raises(RuntimeError, match=r"target \[4, 3\] and input \[3, 4\] must have the "
                                           r"same shape"):
        nn.kl_div_forward(x, t)
    with pytest.raises(TypeError, match="expected target of scalar type Float but found Double"):
        nn.kl_div_forward(x, th.randn(3, 4, dtype=th.float64))
    with pytest.raises(ValueError, match="not a valid value for reduction"):
        nn.kl_div_forward(x, x, "batchmean")
    with pytest.raises(RuntimeError, match=r"input2 \[3, 5\] and input1 \[3, 4\]"):
        nn.margin_ranking_loss_forward(x, th.randn(3, 5), x)
    with pytest.raises(RuntimeError, match=r"expected target of shape \[3\] for inputs \[3, 4\]"):
        nn.cosine_embedding_loss_forward(x, x, th.randn(4))
    with pytest.raises(RuntimeError, match="expects 2D input"):
        nn.cosine_embedding_loss_forward(th.randn(2, 2, 2), th.randn(2, 2, 2), th.randn(2, 2))
    with pytest.raises(RuntimeError, match="expected grad_output of 1 elements"):
        nn.kl_div_backward_input(th.randn(3, 4), x, x, "mean")
