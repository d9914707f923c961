"""conv1d, layer_norm, embedding, dropout and the pointwise losses."""
import numpy as np
import pytest

import ember.th as th
import ember.thnn as nn
from test_kernels import N, T, conv2d_ref, fd_check


@pytest.mark.parametrize("s,p,d,g", [(1, 0, 1, 1), (2, 1, 1, 1), (1, 2, 2, 2)])
def test_conv1d(s, p, d, g):
    rng = np.random.default_rng(10)
    x, w, b = rng.standard_normal((2, 4, 11)), rng.standard_normal((6, 4 // g, 3)), rng.standard_normal(6)
    y = N(nn.conv1d_forward(T(x), T(w), T(b), s, p, d, g))
    ref = conv2d_ref(x[:, :, None], w[:, :, None], b, (1, s), (0, p), (1, d), g)[:, :, 0]
    np.testing.assert_allclose(y, ref, rtol=1e-12, atol=1e-12)

    def bwd(gy):
        gi = nn.conv1d_backward_input(T(gy), x.shape, T(w), s, p, d, g)
        gw, gb = nn.conv1d_backward_params(T(gy), T(x), w.shape, s, p, d, g)
        return [N(gi), N(gw), N(gb)]
    fd_check(lambda x, w, b: N(nn.conv1d_forward(T(x), T(w), T(b), s, p, d, g)), [x, w, b], bwd)
    _, gb_only = nn.conv1d_backward_params(T(y), T(x), w.shape, s, p, d, g, need_weight=False)
    np.testing.assert_allclose(N(gb_only), y.sum(axis=(0, 2)), rtol=1e-12)


def test_conv1d_bad_input():
    with pytest.raises(RuntimeError, match="3-D"):
        nn.conv1d_forward(th.randn(2, 3, 4, 5), th.randn(2, 3, 3))


@pytest.mark.parametrize("shape,nshape", [((4, 6), (6,)), ((2, 3, 4, 5), (4, 5))])
@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm(shape, nshape, affine):
    rng = np.random.default_rng(11)
    x = rng.standard_normal(shape) * 3 + 1
    w = rng.standard_normal(nshape) if affine else None
    b = rng.standard_normal(nshape) if affine else None
    Tw = (lambda a: None if a is None else T(a))
    y, sm, si = nn.layer_norm_forward(T(x), nshape, Tw(w), Tw(b), 1e-5)
    axes = tuple(range(len(shape) - len(nshape), len(shape)))
    ref = (x - x.mean(axis=axes, keepdims=True)) / np.sqrt(x.var(axis=axes, keepdims=True) + 1e-5)
    if affine:
        ref = ref * w + b
    np.testing.assert_allclose(N(y), ref, rtol=1e-10, atol=1e-12)

    if affine:
        def f(x, w, b):
            return N(nn.layer_norm_forward(T(x), nshape, T(w), T(b))[0])

        def bwd(gy):
            _, sm, si = nn.layer_norm_forward(T(x), nshape, T(w), T(b))
            gi = nn.layer_norm_backward_input(T(gy), T(x), nshape, T(w), sm, si)
            gw, gb = nn.layer_norm_backward_params(T(gy), T(x), nshape, sm, si)
            return [N(gi), N(gw), N(gb)]
        fd_check(f, [x, w, b], bwd)
    else:
        fd_check(lambda x: N(nn.layer_norm_forward(T(x), nshape)[0]), [x],
                 lambda gy: [N(nn.layer_norm_backward_input(T(gy), T(x), nshape, None, sm, si))])


@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm_float32_matches_float64(affine):
    # K = 600: the parameter backward runs in blocks of columns
    rng = np.random.default_rng(12)
    x, gy = rng.standard_normal((9, 600)) * 2 + 5, rng.standard_normal((9, 600))
    w, b = rng.standard_normal(600), rng.standard_normal(600)

    def run(dt):
        c = (lambda a: T(a.astype(dt)))
        wt, bt = (c(w), c(b)) if affine else (None, None)
        y, sm, si = nn.layer_norm_forward(c(x), (600,), wt, bt, 1e-5)
        gi = nn.layer_norm_backward_input(c(gy), c(x), (600,), wt, sm, si)
        gw, gb = nn.layer_norm_backward_params(c(gy), c(x), (600,), sm, si)
        return [N(a) for a in (y, sm, si, gi, gw, gb)]
    for a, ref in zip(run(np.float32), run(np.float64)):
        assert a.dtype == np.float32
        np.testing.assert_allclose(a, ref, rtol=1e-5, atol=1e-5 * np.abs(ref).max())


def test_layer_norm_bad_shape():
    with pytest.raises(RuntimeError, match="Given normalized_shape"):
        nn.layer_norm_forward(th.randn(2, 3), (4,))


@pytest.mark.parametrize("padding_idx", [None, 2, -1])
def test_embedding(padding_idx):
    rng = np.random.default_rng(12)
    w = rng.standard_normal((5, 3))
    idx = np.array([[0, 2, 4], [2, 2, 1]], dtype=np.int64)
    y = nn.embedding_forward(T(w), T(idx))
    np.testing.assert_array_equal(N(y), w[idx])
    gy = rng.standard_normal((2, 3, 3))
    gw = N(nn.embedding_backward_params(T(gy), T(idx), 5, padding_idx))
    ref = np.zeros_like(w)
    np.add.at(ref, idx, gy)
    if padding_idx is not None:
        ref[padding_idx] = 0
    np.testing.assert_allclose(gw, ref, rtol=1e-12)


def test_embedding_bad_input():
    w = th.randn(5, 3)
    with pytest.raises(IndexError, match="index 5 is out of bounds"):
        nn.embedding_forward(w, th.tensor([1, 5]))
    with pytest.raises(RuntimeError, match="'indices' to have scalar type Long"):
        nn.embedding_forward(w, th.tensor([1.0, 2.0]))


@pytest.mark.parametrize("p", [0.0, 0.3, 1.0])
def test_dropout(p):
    x = th.randn(100, 50, dtype=th.float64)
    g = th.Generator().manual_seed(0) if hasattr(th, "Generator") else None
    y, mask = nn.dropout_forward(x, p, g)
    m = N(mask)
    assert set(np.unique(m)) <= {0.0, 1.0 / (1.0 - p) if p < 1 else 0.0}
    if 0 < p < 1:
        assert abs((m == 0).mean() - p) < 0.03
    np.testing.assert_allclose(N(y), N(x) * m)
    gy = th.randn(100, 50, dtype=th.float64)
    np.testing.assert_allclose(N(nn.dropout_backward_input(gy, mask)), N(gy) * m)
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1"):
        nn.dropout_forward(x, 1.5)


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


@pytest.mark.parametrize("shape,osz", [((2, 3, 7, 9), (3, 4)), ((3, 5, 5), (5, 5)),
                                       ((1, 2, 6, 6), (1, 1)), ((1, 1, 4, 10), (None, 3))])
def test_adaptive_avg_pool2d(shape, osz):
    x = np.random.default_rng(14).standard_normal(shape)
    y = N(nn.adaptive_avg_pool2d_forward(T(x), osz))
    H, W = shape[-2:]
    OH, OW = (H if osz[0] is None else osz[0]), osz[1]
    ref = np.zeros(shape[:-2] + (OH, OW))
    for i in range(OH):
        for j in range(OW):
            h0, h1 = i * H // OH, -(-(i + 1) * H // OH)
            w0, w1 = j * W // OW, -(-(j + 1) * W // OW)
            ref[..., i, j] = x[..., h0:h1, w0:w1].mean(axis=(-2, -1))
    np.testing.assert_allclose(y, ref, rtol=1e-12)
    fd_check(lambda x: N(nn.adaptive_avg_pool2d_forward(T(x), osz)), [x],
             lambda gy: [N(nn.adaptive_avg_pool2d_backward_input(T(gy), x.shape))])


def test_adaptive_avg_pool2d_bad_input():
    with pytest.raises(RuntimeError, match="Expected 3D or 4D"):
        nn.adaptive_avg_pool2d_forward(th.randn(4, 4), 2)
