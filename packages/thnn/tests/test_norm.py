"""ember.thnn's normalisations (batch, layer and group norm): forward
against NumPy, float64 finite-difference backward, bad input."""

import numpy as np
import pytest

import ember.th as th
import ember.thnn as nn

from thnn_testing import N, T, TOL, fd_check, group_norm_ref, strided


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("shape", [(4, 3), (3, 2, 4, 5)])
def test_batch_norm(training, shape):
    rng = np.random.default_rng(7)
    x = rng.standard_normal(shape) * 2 + 1
    c = shape[1]
    w, b = rng.standard_normal(c), rng.standard_normal(c)
    rm, rv = rng.standard_normal(c), rng.uniform(0.5, 2, c)
    rmt, rvt = T(rm.copy()), T(rv.copy())
    y, sm, si = nn.batch_norm_forward(T(x), T(w), T(b), rmt, rvt, training, 0.1, 1e-5)
    axes = tuple(i for i in range(len(shape)) if i != 1)
    bc = (1, c) + (1,) * (len(shape) - 2)
    if training:
        mean, var = x.mean(axis=axes), x.var(axis=axes)
        cnt = x.size / c
        np.testing.assert_allclose(N(rmt), 0.9 * rm + 0.1 * mean, rtol=1e-12)
        np.testing.assert_allclose(N(rvt), 0.9 * rv + 0.1 * var * cnt / (cnt - 1), rtol=1e-12)
    else:
        mean, var = rm, rv
    ref = (x - mean.reshape(bc)) / np.sqrt(var.reshape(bc) + 1e-5) * w.reshape(bc) + b.reshape(bc)
    np.testing.assert_allclose(N(y), ref, rtol=1e-10, atol=1e-12)

    def f(x, w, b):
        return N(nn.batch_norm_forward(T(x), T(w), T(b), T(rm.copy()), T(rv.copy()),
                                       training, 0.1, 1e-5)[0])

    def bwd(gy):
        _, sm, si = nn.batch_norm_forward(T(x), T(w), T(b), T(rm.copy()), T(rv.copy()),
                                          training, 0.1, 1e-5)
        gi = nn.batch_norm_backward_input(T(gy), T(x), T(w), sm, si, training)
        gw, gb = nn.batch_norm_backward_params(T(gy), T(x), sm, si)
        return [N(gi), N(gw), N(gb)]
    fd_check(f, [x, w, b], bwd)


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


GN_CASES = [((2, 6, 5), 3), ((3, 4, 3, 2), 2), ((2, 4, 2, 2, 3), 4), ((1, 5), 5), ((4, 6), 1)]


@pytest.mark.parametrize("shape,groups", GN_CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_group_norm_forward(shape, groups, dtype):
    rng = np.random.default_rng(20)
    x = (rng.standard_normal(shape) * 2 + 0.5).astype(dtype)
    w, b = rng.standard_normal(shape[1]).astype(dtype), rng.standard_normal(shape[1]).astype(dtype)
    y, m, r = nn.group_norm_forward(T(x), groups, T(w), T(b), 1e-5)
    ry, rm, rr = group_norm_ref(x.astype(np.float64), groups, w, b, 1e-5)
    tol = TOL[dtype]
    np.testing.assert_allclose(N(y), ry, rtol=tol * 10, atol=tol * 10)
    np.testing.assert_allclose(N(m), rm, rtol=tol, atol=tol)
    np.testing.assert_allclose(N(r), rr, rtol=tol * 10)
    y0 = nn.group_norm_forward(strided(x), groups)[0]
    np.testing.assert_allclose(N(y0), group_norm_ref(x.astype(np.float64), groups, None, None,
                                                     1e-5)[0], rtol=tol * 10, atol=tol * 10)


@pytest.mark.parametrize("shape,groups", GN_CASES)
def test_group_norm_backward_fd(shape, groups):
    rng = np.random.default_rng(21)
    x = rng.standard_normal(shape) * 1.5 + 0.3
    w, b = rng.standard_normal(shape[1]), rng.standard_normal(shape[1])

    def f(x, w, b):
        return N(nn.group_norm_forward(T(x), groups, T(w), T(b), 1e-5)[0])

    def bwd(gy):
        _, m, r = nn.group_norm_forward(T(x), groups, T(w), T(b), 1e-5)
        gi = nn.group_norm_backward_input(strided(gy), T(x), groups, T(w), m, r)
        gw, gb = nn.group_norm_backward_params(T(gy), strided(x), groups, m, r)
        return [N(gi), N(gw), N(gb)]
    fd_check(f, [x, w, b], bwd)
    # without affine parameters
    _, m, r = nn.group_norm_forward(T(x), groups)
    fd_check(lambda x: N(nn.group_norm_forward(T(x), groups)[0]), [x],
             lambda gy: [N(nn.group_norm_backward_input(T(gy), T(x), groups, None, m, r))])
    gw, gb = nn.group_norm_backward_params(T(x), T(x), groups, m, r, need_weight=False)
    assert gw is None and gb is not None


def test_group_norm_empty_batch_and_instance_norm():
    x = np.zeros((0, 4, 3))
    y, m, r = nn.group_norm_forward(T(x), 2)
    assert tuple(y.shape) == (0, 4, 3) and tuple(m.shape) == (0, 2)
    # instance norm = group norm with num_groups = C
    xi = np.random.default_rng(22).standard_normal((2, 3, 4, 5))
    ref = (xi - xi.mean((2, 3), keepdims=True)) / np.sqrt(xi.var((2, 3), keepdims=True) + 1e-5)
    np.testing.assert_allclose(N(nn.group_norm_forward(T(xi), 3)[0]), ref, rtol=1e-12, atol=1e-12)


def test_group_norm_bad_input():
    x = th.randn(2, 6, 4)
    with pytest.raises(RuntimeError, match=r"divisible by num_groups, but got input of shape "
                                           r"\[2, 6, 4\] and num_groups=4"):
        nn.group_norm_forward(x, 4)
    with pytest.raises(ValueError, match="num_groups must be positive"):
        nn.group_norm_forward(x, 0)
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        nn.group_norm_forward(th.randn(6), 3)
    with pytest.raises(RuntimeError, match=r"weight of shape \[6\] but got \[5\]"):
        nn.group_norm_forward(x, 3, th.randn(5))
    with pytest.raises(TypeError, match="Float or Double"):
        nn.group_norm_forward(th.empty(2, 6, dtype=th.int64), 3)
    _, m, r = nn.group_norm_forward(x, 3)
    with pytest.raises(RuntimeError, match=r"grad_output \[2, 6, 5\]"):
        nn.group_norm_backward_input(th.randn(2, 6, 5), x, 3, None, m, r)
    with pytest.raises(RuntimeError, match=r"save_mean of shape \[2, 2\]"):
        nn.group_norm_backward_input(th.randn(2, 6, 4), x, 2, None, m, r)
