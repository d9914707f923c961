"""The margin, embedding and likelihood losses against their definitions
written out in NumPy (float64), each reduction and the legacy flags;
modules against functionals; gradcheck and gradgradcheck; torch where
installed; bad input with PyTorch's wording.  Also cross_entropy with
label smoothing / probability targets and kl_div's log_target/batchmean
against NumPy."""
import math
import warnings

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F
from ember.autograd import gradcheck, gradgradcheck

from conftest import requires_torch, torch


def E(a, grad=False):
    t = ember.from_numpy(np.array(a))
    return t.requires_grad_() if grad and t.is_floating_point() else t


def reduce(loss, reduction):
    return {"mean": np.mean, "sum": np.sum, "none": lambda v: v}[reduction](loss)


# ---- the definitions in NumPy -------------------------------------------------------
def np_margin_ranking(a, b, y, margin=0.0):
    return np.maximum(0, -y * (a - b) + margin)


def np_hinge_embedding(x, y, margin=1.0):
    return np.where(y == 1, x, 0) + np.where(y == -1, np.maximum(0, margin - x), 0)


def np_soft_margin(x, y):
    return np.log1p(np.exp(-y * x))


def np_cosine_embedding(a, b, y, margin=0.0):
    cos = (a * b).sum(-1) / np.sqrt(((a * a).sum(-1) + 1e-12) * ((b * b).sum(-1) + 1e-12))
    return np.where(y == 1, 1 - cos, np.maximum(0, cos - margin))


def np_multi_margin(x, t, p=1, margin=1.0, w=None):
    x = np.atleast_2d(x)
    t = np.atleast_1d(t)
    out = np.zeros(len(x))
    for n in range(len(x)):
        for i in range(x.shape[1]):
            if i == t[n]:
                continue
            z = max(0.0, margin - x[n, t[n]] + x[n, i]) ** p
            out[n] += z * (w[t[n]] if w is not None else 1)
    return out / x.shape[1]


def np_triplet(a, p, n, margin=1.0, norm=2, eps=1e-6, swap=False):
    def dist(u, v):
        return (np.abs(u - v + eps) ** norm).sum(-1) ** (1 / norm)
    d_neg = dist(a, n)
    if swap:
        d_neg = np.minimum(d_neg, dist(p, n))
    return np.maximum(0, margin + dist(a, p) - d_neg)


def np_poisson(x, y, log_input=True, full=False, eps=1e-8):
    loss = np.exp(x) - y * x if log_input else x - y * np.log(x + eps)
    if full:
        with np.errstate(divide="ignore", invalid="ignore"):
            stirling = y * np.log(y) - y + 0.5 * np.log(2 * np.pi * y)
        loss = loss + np.where(y > 1, stirling, 0)
    return loss


def np_gaussian(x, y, var, full=False, eps=1e-6):
    var = np.maximum(var, eps)
    loss = 0.5 * (np.log(var) + (x - y) ** 2 / var)
    return loss + 0.5 * np.log(2 * np.pi) if full else loss


def np_multilabel_margin(x, t):
    x, t = np.atleast_2d(x), np.atleast_2d(t)
    out = np.zeros(len(x))
    for n in range(len(x)):
        targets = []
        for j in t[n]:
            if j == -1:
                break
            targets.append(j)
        for j in targets:
            for i in range(x.shape[1]):
                if i not in targets:
                    out[n] += max(0.0, 1 - (x[n, j] - x[n, i]))
    return out / x.shape[1]


def np_multilabel_soft_margin(x, y, w=None):
    def log_sigmoid(v):
        return -np.log1p(np.exp(-v))
    loss = -(y * log_sigmoid(x) + (1 - y) * log_sigmoid(-x))
    if w is not None:
        loss = loss * w
    return loss.mean(-1)


def np_cosine_distance(u, v):
    return 1 - (u * v).sum(-1) / np.maximum(np.linalg.norm(u, axis=-1) *
                                            np.linalg.norm(v, axis=-1), 1e-8)


# (id, ember call, NumPy reference, inputs factory) — the factory returns arrays;
# float arrays are differentiated, int/sign arrays are targets
def sign(rng, *shape):
    return np.where(rng.standard_normal(shape) > 0, 1.0, -1.0)


LOSSES = [
    ("margin_ranking", lambda F, a, b, y, **kw: F.margin_ranking_loss(a, b, y, 0.3, **kw),
     lambda a, b, y: np_margin_ranking(a, b, y, 0.3),
     lambda r: (r.standard_normal(7), r.standard_normal(7), sign(r, 7))),
    ("margin_ranking_broadcast", lambda F, a, b, y, **kw: F.margin_ranking_loss(a, b, y, **kw),
     np_margin_ranking,
     lambda r: (r.standard_normal((3, 4)), r.standard_normal((1, 4)), sign(r, 3, 1))),
    ("hinge_embedding", lambda F, x, y, **kw: F.hinge_embedding_loss(x, y, 0.7, **kw),
     lambda x, y: np_hinge_embedding(x, y, 0.7),
     lambda r: (r.standard_normal((3, 5)), sign(r, 3, 5))),
    ("soft_margin", lambda F, x, y, **kw: F.soft_margin_loss(x, y, **kw), np_soft_margin,
     lambda r: (3 * r.standard_normal((4, 3)), sign(r, 4, 3))),
    ("cosine_embedding", lambda F, a, b, y, **kw: F.cosine_embedding_loss(a, b, y, 0.2, **kw),
     lambda a, b, y: np_cosine_embedding(a, b, y, 0.2),
     lambda r: (r.standard_normal((6, 4)), r.standard_normal((6, 4)), sign(r, 6))),
    ("cosine_embedding_1d", lambda F, a, b, y, **kw: F.cosine_embedding_loss(a, b, y, -0.5, **kw),
     lambda a, b, y: np_cosine_embedding(a, b, y, -0.5),
     lambda r: (r.standard_normal(5), r.standard_normal(5), np.array(-1.0))),
    ("multi_margin", lambda F, x, t, **kw: F.multi_margin_loss(x, t, **kw), np_multi_margin,
     lambda r: (r.standard_normal((5, 4)), r.integers(0, 4, 5))),
    ("multi_margin_p2_weight", lambda F, x, t, w, **kw: F.multi_margin_loss(x, t, 2, 0.6, w, **kw),
     lambda x, t, w: np_multi_margin(x, t, 2, 0.6, w),
     lambda r: (r.standard_normal((5, 4)), r.integers(0, 4, 5), r.random(4) + 0.5)),
    ("multi_margin_1d", lambda F, x, t, **kw: F.multi_margin_loss(x, t, **kw),
     lambda x, t: np_multi_margin(x, t)[0],
     lambda r: (r.standard_normal(6), np.array(2))),
    ("triplet", lambda F, a, p, n, **kw: F.triplet_margin_loss(a, p, n, **kw), np_triplet,
     lambda r: tuple(r.standard_normal((5, 3)) for _ in range(3))),
    ("triplet_p1_swap",
     lambda F, a, p, n, **kw: F.triplet_margin_loss(a, p, n, 1.5, 1, swap=True, **kw),
     lambda a, p, n: np_triplet(a, p, n, 1.5, 1, swap=True),
     lambda r: tuple(r.standard_normal((5, 3)) for _ in range(3))),
    ("triplet_p3", lambda F, a, p, n, **kw: F.triplet_margin_loss(a, p, n, 0.5, 3, **kw),
     lambda a, p, n: np_triplet(a, p, n, 0.5, 3),
     lambda r: tuple(r.standard_normal((4, 2)) for _ in range(3))),
    ("triplet_distance_fn", lambda F, a, p, n, **kw: F.triplet_margin_with_distance_loss(
        a, p, n, distance_function=lambda u, v: 1 - F.cosine_similarity(u, v, -1), margin=0.4,
        swap=True, **kw),
     lambda a, p, n: np.maximum(0, 0.4 + np_cosine_distance(a, p) - np.minimum(
         np_cosine_distance(a, n), np_cosine_distance(p, n))),
     lambda r: tuple(r.standard_normal((5, 3)) for _ in range(3))),
    ("triplet_distance_default", lambda F, a, p, n, **kw: F.triplet_margin_with_distance_loss(
        a, p, n, **kw), np_triplet,
     lambda r: tuple(r.standard_normal((5, 3)) for _ in range(3))),
    ("multilabel_margin", lambda F, x, t, **kw: F.multilabel_margin_loss(x, t, **kw),
     np_multilabel_margin,
     lambda r: (r.standard_normal((4, 5)),
                np.array([[3, 0, -1, 1, 2], [0, 1, 2, 3, 4], [4, -1, 0, 0, 0],
                          [-1, 2, 2, 2, 2]]))),
    ("multilabel_margin_1d", lambda F, x, t, **kw: F.multilabel_margin_loss(x, t, **kw),
     lambda x, t: np_multilabel_margin(x, t)[0],
     lambda r: (r.standard_normal(4), np.array([2, 1, -1, 0]))),
    ("multilabel_soft_margin", lambda F, x, y, w, **kw: F.multilabel_soft_margin_loss(
        x, y, w, **kw), np_multilabel_soft_margin,
     lambda r: (r.standard_normal((4, 5)), (r.random((4, 5)) > 0.5) * 1.0, r.random(5))),
    ("poisson", lambda F, x, y, **kw: F.poisson_nll_loss(x, y, **kw), np_poisson,
     lambda r: (r.standard_normal((3, 4)), r.poisson(2.0, (3, 4)).astype(float))),
    ("poisson_full", lambda F, x, y, **kw: F.poisson_nll_loss(x, y, full=True, **kw),
     lambda x, y: np_poisson(x, y, full=True),
     lambda r: (r.standard_normal((3, 4)), r.poisson(2.0, (3, 4)).astype(float))),
    ("poisson_rates", lambda F, x, y, **kw: F.poisson_nll_loss(x, y, log_input=False, **kw),
     lambda x, y: np_poisson(x, y, log_input=False),
     lambda r: (r.random((3, 4)) + 0.2, r.poisson(2.0, (3, 4)).astype(float))),
    ("gaussian", lambda F, x, y, v, **kw: F.gaussian_nll_loss(x, y, v, **kw), np_gaussian,
     lambda r: (r.standard_normal((4, 3)), r.standard_normal((4, 3)), r.random((4, 3)) + 0.1)),
    ("gaussian_full_homoscedastic",
     lambda F, x, y, v, **kw: F.gaussian_nll_loss(x, y, v, full=True, **kw),
     lambda x, y, v: np_gaussian(x, y, v[:, None], full=True),
     lambda r: (r.standard_normal((4, 3)), r.standard_normal((4, 3)), r.random(4) + 0.1)),
    ("gaussian_broadcast_dim",
     lambda F, x, y, v, **kw: F.gaussian_nll_loss(x, y, v, **kw), np_gaussian,
     lambda r: (r.standard_normal((2, 3, 4)), r.standard_normal((2, 3, 4)),
                r.random((2, 1, 4)) + 0.1)),
]


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("name,call,ref,make", LOSSES, ids=[c[0] for c in LOSSES])
def test_loss_matches_numpy(name, call, ref, make, reduction, rng):
    arrays = make(rng)
    got = call(F, *[E(a) for a in arrays], reduction=reduction).numpy()
    want = reduce(ref(*arrays), reduction)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


def differentiated(name, arrays):
    """Positions of the inputs a loss is differentiated in: targets (signs,
    classes, counts) and class weights stay fixed."""
    fixed_last = name.startswith(("margin_ranking", "hinge", "soft_margin", "cosine",
                                  "multi_margin", "multilabel"))
    return [i for i, a in enumerate(arrays) if a.dtype.kind == "f"
            and not (fixed_last and i == len(arrays) - 1)
            and not (name.startswith(("poisson", "multilabel")) and i == 1)]


@pytest.mark.parametrize("name,call,ref,make", LOSSES, ids=[c[0] for c in LOSSES])
def test_gradcheck(name, call, ref, make):
    arrays = make(np.random.default_rng(11))
    diff = differentiated(name, arrays)
    inputs = [E(a, grad=i in diff) for i, a in enumerate(arrays)]

    def fn(*xs):
        full = list(inputs)
        for i, x in zip(diff, xs):
            full[i] = x
        return call(F, *full, reduction="sum")
    assert gradcheck(fn, tuple(inputs[i] for i in diff), eps=1e-6, atol=1e-5)
    if name in ("margin_ranking", "cosine_embedding", "multi_margin_p2_weight", "triplet",
                "poisson_full", "gaussian", "soft_margin"):
        assert gradgradcheck(fn, tuple(inputs[i] for i in diff), eps=1e-6, atol=1e-4)


@requires_torch
@pytest.mark.torch
@pytest.mark.parametrize("reduction", ["mean", "none"])
@pytest.mark.parametrize("name,call,ref,make", LOSSES, ids=[c[0] for c in LOSSES])
def test_loss_matches_torch(name, call, ref, make, reduction, rng):
    arrays = make(rng)
    diff = differentiated(name, arrays)
    ex = [E(a, grad=i in diff) for i, a in enumerate(arrays)]
    tx = [torch.from_numpy(np.array(a)).requires_grad_(i in diff)
          for i, a in enumerate(arrays)]
    ey = call(F, *ex, reduction=reduction)
    ty = call(torch.nn.functional, *tx, reduction=reduction)
    np.testing.assert_allclose(ey.detach().numpy(), ty.detach().numpy(), rtol=1e-10,
                               atol=1e-12)
    gout = rng.standard_normal(tuple(ty.shape))
    ey.backward(E(gout))
    ty.backward(torch.from_numpy(gout))
    for i in diff:
        np.testing.assert_allclose(ex[i].grad.numpy(), tx[i].grad.numpy(), rtol=1e-9,
                                   atol=1e-12)


def test_legacy_reduction_flags(rng):
    a, b, y = rng.standard_normal(6), rng.standard_normal(6), sign(rng, 6)
    full = np_margin_ranking(a, b, y)
    args = [E(a), E(b), E(y)]
    np.testing.assert_allclose(F.margin_ranking_loss(*args, reduce=False).numpy(), full)
    np.testing.assert_allclose(float(F.margin_ranking_loss(*args, size_average=False)),
                               full.sum())
    m = nn.MarginRankingLoss(size_average=False)
    assert m.reduction == "sum"
    np.testing.assert_allclose(float(m(*args)), full.sum())


# ---- modules -------------------------------------------------------------------------
MODULES = [
    (lambda: nn.MarginRankingLoss(0.2, reduction="sum"),
     lambda a, b, y: F.margin_ranking_loss(a, b, y, 0.2, reduction="sum"), "ranking"),
    (lambda: nn.HingeEmbeddingLoss(0.5), lambda x, y: F.hinge_embedding_loss(x, y, 0.5),
     "signs"),
    (lambda: nn.SoftMarginLoss(reduction="none"),
     lambda x, y: F.soft_margin_loss(x, y, reduction="none"), "signs"),
    (lambda: nn.CosineEmbeddingLoss(0.1), lambda a, b, y: F.cosine_embedding_loss(a, b, y, 0.1),
     "pair"),
    (lambda: nn.MultiMarginLoss(p=2, margin=0.5),
     lambda x, t: F.multi_margin_loss(x, t, 2, 0.5), "classes"),
    (lambda: nn.TripletMarginLoss(0.5, p=1, swap=True),
     lambda a, p, n: F.triplet_margin_loss(a, p, n, 0.5, 1, swap=True), "triplet"),
    (lambda: nn.PoissonNLLLoss(log_input=False, full=True),
     lambda x, y: F.poisson_nll_loss(x, y, False, True), "counts"),
    (lambda: nn.MultiLabelSoftMarginLoss(reduction="sum"),
     lambda x, y: F.multilabel_soft_margin_loss(x, y, reduction="sum"), "labels"),
    (lambda: nn.MultiLabelMarginLoss(), lambda x, t: F.multilabel_margin_loss(x, t),
     "label_lists"),
    (lambda: nn.TripletMarginWithDistanceLoss(margin=0.5, swap=True),
     lambda a, p, n: F.triplet_margin_with_distance_loss(a, p, n, margin=0.5, swap=True),
     "triplet"),
    (lambda: nn.GaussianNLLLoss(full=True, eps=1e-3),
     lambda x, y, v: F.gaussian_nll_loss(x, y, v, True, 1e-3), "gauss"),
]


def module_inputs(kind, rng):
    x = rng.standard_normal((4, 3))
    return {"pair": (x, rng.standard_normal((4, 3)), sign(rng, 4)),
            "ranking": (x[:, 0], x[:, 1], sign(rng, 4)),
            "signs": (x, sign(rng, 4, 3)),
            "classes": (x, rng.integers(0, 3, 4)),
            "triplet": (x, rng.standard_normal((4, 3)), rng.standard_normal((4, 3))),
            "counts": (np.abs(x) + 0.1, rng.poisson(3.0, (4, 3)).astype(float)),
            "gauss": (x, rng.standard_normal((4, 3)), rng.random((4, 3))),
            "labels": (x, (rng.random((4, 3)) > 0.5) * 1.0),
            "label_lists": (x, np.array([[2, -1, 0], [0, 1, 2], [1, 0, -1], [-1, 0, 0]]))}[kind]


@pytest.mark.parametrize("build,call,kind", MODULES)
def test_module_matches_functional(build, call, kind, rng):
    arrays = [E(a) for a in module_inputs(kind, rng)]
    np.testing.assert_array_equal(build()(*arrays).numpy(), call(*arrays).numpy())


def test_multi_margin_weight_is_a_buffer(rng):
    w = E(rng.random(3))
    m = nn.MultiMarginLoss(weight=w)
    assert list(m.state_dict()) == ["weight"]


def test_gaussian_var_clamp_keeps_the_gradient():
    # var below eps: the value uses eps, the gradient still reaches var
    var = E(np.array([1e-9, 0.5]), grad=True)
    loss = F.gaussian_nll_loss(E(np.array([0.0, 1.0])), E(np.array([0.0, 0.0])), var,
                               reduction="sum")
    np.testing.assert_allclose(float(loss), 0.5 * (math.log(1e-6) + math.log(0.5) + 2.0))
    loss.backward()
    assert np.all(var.grad.numpy() != 0)


# ---- cross_entropy and kl_div, as complete as PyTorch's ------------------------------
def np_log_softmax(x, axis):
    m = x.max(axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis, keepdims=True))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("smoothing", [0.0, 0.25])
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy_probability_targets(rng, reduction, smoothing, weighted):
    x = rng.standard_normal((3, 4, 2))
    p = rng.dirichlet(np.ones(4), (3, 2)).transpose(0, 2, 1)
    w = rng.random(4) + 0.5 if weighted else np.ones(4)
    q = p * (1 - smoothing) + smoothing / 4
    loss = -(np_log_softmax(x, 1) * q * w.reshape(1, 4, 1)).sum(1)
    want = loss.sum() / (3 * 2) if reduction == "mean" else reduce(loss, reduction)
    got = F.cross_entropy(E(x), E(p), E(w) if weighted else None, reduction=reduction,
                          label_smoothing=smoothing)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)


@pytest.mark.parametrize("smoothing", [0.0, 0.3])
def test_cross_entropy_class_targets_with_smoothing(rng, smoothing):
    x = rng.standard_normal((6, 5))
    t = np.array([0, 3, 1, 4, 3, 2])
    w = rng.random(5) + 0.5
    logp = np_log_softmax(x, 1)
    keep = t != 1                                     # ignore_index=1
    nll = -(logp[np.arange(6), t] * w[t])[keep].sum() / w[t][keep].sum()
    smooth = -(logp * w).sum(1)[keep].sum() / w[t][keep].sum()
    want = (1 - smoothing) * nll + smoothing / 5 * smooth
    got = F.cross_entropy(E(x), E(t), E(w), ignore_index=1, label_smoothing=smoothing)
    np.testing.assert_allclose(float(got), want, rtol=1e-12)


@pytest.mark.parametrize("log_target", [False, True])
@pytest.mark.parametrize("reduction", ["batchmean", "sum", "none", "mean"])
def test_kl_div(rng, log_target, reduction):
    logq = np_log_softmax(rng.standard_normal((4, 5)), 1)
    p = rng.dirichlet(np.ones(5), 4)
    loss = p * (np.log(p) - logq)
    want = loss.sum() / 4 if reduction == "batchmean" else reduce(loss, reduction)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = F.kl_div(E(logq), E(np.log(p) if log_target else p), reduction=reduction,
                       log_target=log_target)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
    m = nn.KLDivLoss(reduction=reduction if reduction != "mean" else "sum",
                     log_target=log_target)
    assert m.log_target is log_target


# ---- bad input ----------------------------------------------------------------------
ERRORS = [
    ("margin_ranking-dims", lambda F, L: F.margin_ranking_loss(L.ones(3), L.ones(3, 1),
                                                               L.ones(3)),
     RuntimeError, "margin_ranking_loss : All input tensors should have same dimension but got "
                   "sizes: input1: "),
    ("margin_ranking-reduction", lambda F, L: F.margin_ranking_loss(
        L.ones(3), L.ones(3), L.ones(3), reduction="x"), ValueError,
     "x is not a valid value for reduction"),
    ("cosine-multi-target", lambda F, L: F.cosine_embedding_loss(L.ones(3, 4), L.ones(3, 4),
                                                                 L.ones(3, 1)),
     RuntimeError, "0D or 1D target tensor expected, multi-target not supported"),
    ("cosine-0d-target", lambda F, L: F.cosine_embedding_loss(L.ones(3, 4), L.ones(3, 4),
                                                              L.ones(())),
     RuntimeError, "0D target tensor expects 1D input tensors, but found inputs with sizes "
                   "[3, 4] and [3, 4]."),
    ("cosine-1d-target", lambda F, L: F.cosine_embedding_loss(L.ones(4), L.ones(4), L.ones(3)),
     RuntimeError, "1D target tensor expects 2D input tensors, but found inputs with sizes "
                   "[4] and [4]."),
    ("multi_margin-range", lambda F, L: F.multi_margin_loss(L.ones(3, 4), L.tensor([0, 1, 4])),
     RuntimeError, "target out of range"),
    ("multi_margin-target-size", lambda F, L: F.multi_margin_loss(L.ones(3, 4),
                                                                  L.tensor([0, 1])),
     RuntimeError, "multi_margin_loss: target tensor should be 1-D with size equal to the "
                   "number of input samples (batch size). Expected target size [3], but got "
                   "[2]. Input has shape [3, 4]."),
    ("multi_margin-rank", lambda F, L: F.multi_margin_loss(L.ones(3, 4, 2), L.tensor([0, 1, 1])),
     RuntimeError, "Expected non-empty vector or matrix with optional 0-dim batch size, but "
                   "got: [3, 4, 2]"),
    ("multi_margin-p", lambda F, L: F.multi_margin_loss(L.ones(3, 4), L.tensor([0, 1, 1]), p=3),
     ValueError, "only p == 1 and p == 2 supported"),
    ("multi_margin-weight", lambda F, L: F.multi_margin_loss(L.ones(3, 4), L.tensor([0, 1, 1]),
                                                             weight=L.ones(3)),
     RuntimeError, "inconsistent weight size, expected 4 but got [3]"),
    ("multi_margin-float-target", lambda F, L: F.multi_margin_loss(L.ones(3, 4),
                                                                   L.tensor([0., 1., 1.])),
     RuntimeError, "expected scalar type Long but found Float"),
    ("triplet-dims", lambda F, L: F.triplet_margin_loss(L.ones(3, 4), L.ones(3, 4), L.ones(3)),
     RuntimeError, "The anchor, positive, and negative tensors are expected to have the same "
                   "number of dimensions, but got: anchor 2D, positive 2D, and negative 1D "
                   "inputs"),
    ("triplet-margin", lambda F, L: F.triplet_margin_loss(L.ones(3, 4), L.ones(3, 4),
                                                          L.ones(3, 4), margin=0),
     ValueError, "margin must be greater than 0, got 0"),
    ("gaussian-negative-var", lambda F, L: F.gaussian_nll_loss(L.ones(3, 4), L.ones(3, 4),
                                                               -L.ones(3, 4)),
     ValueError, "var has negative entry/entries"),
    ("gaussian-var-size", lambda F, L: F.gaussian_nll_loss(L.ones(3, 4), L.ones(3, 4),
                                                           L.ones(3, 2)),
     ValueError, "var is of incorrect size"),
    ("gaussian-reduction", lambda F, L: F.gaussian_nll_loss(L.ones(3, 4), L.ones(3, 4),
                                                            L.ones(3, 4), reduction="x"),
     ValueError, "x is not valid"),
    ("multilabel-target-size", lambda F, L: F.multilabel_margin_loss(
        L.ones(3, 4), L.tensor([[0, 1, -1, 2]] * 2)),
     RuntimeError, "inconsistent target size: [2, 4] for input of size: [3, 4]"),
    ("multilabel-range", lambda F, L: F.multilabel_margin_loss(
        L.ones(3, 4), L.tensor([[0, 5, -1, 2]] * 3)),
     RuntimeError, "argument #2 'target' is out of range"),
    ("multilabel-rank", lambda F, L: F.multilabel_margin_loss(
        L.ones(3, 4, 2), L.tensor([[0, 1, -1, 2]] * 3)),
     RuntimeError, "Expected non-empty vector or matrix with optional 0-dim batch size, but "
                   "got: [3, 4, 2]"),
    ("triplet-distance-margin", lambda F, L: F.triplet_margin_with_distance_loss(
        L.ones(3, 4), L.ones(3, 4), L.ones(3, 4), margin=-1.0),
     ValueError, "margin must be greater than 0, got -1.0"),
    ("poisson-reduction", lambda F, L: F.poisson_nll_loss(L.ones(3), L.ones(3), reduction="x"),
     ValueError, "x is not a valid value for reduction"),
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


def test_module_argument_checks():
    with pytest.raises(ValueError, match="only p == 1 and p == 2 supported"):
        nn.MultiMarginLoss(p=3)
    with pytest.raises(ValueError, match="TripletMarginLoss: expected margin to be greater "
                                         "than 0, got -1 instead"):
        nn.TripletMarginLoss(margin=-1)
