"""ember.thnn's activations, softmax / log_softmax and dropout."""

import numpy as np
import pytest

import ember.th as th
import ember.thnn as nn

from thnn_testing import N, T, fd_check


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_softmax(dim, log, dtype):
    x = (np.random.default_rng(5).standard_normal((3, 4, 5)) * 30).astype(dtype)
    fwd = nn.log_softmax_forward if log else nn.softmax_forward
    bwd = nn.log_softmax_backward_input if log else nn.softmax_backward_input
    m = x.max(axis=dim, keepdims=True).astype(np.float64)
    lse = m + np.log(np.exp(x - m).sum(axis=dim, keepdims=True))
    ref = x - lse if log else np.exp(x - lse)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(N(fwd(T(x), dim)), ref, rtol=tol, atol=tol)
    x = x.astype(np.float64) / 30
    fd_check(lambda x: N(fwd(T(x), dim)), [x],
             lambda gy: [N(bwd(T(gy), fwd(T(x), dim), dim))])


def _softmax_ref(x):
    """float64 softmax and log_softmax over the last dim"""
    x = x.astype(np.float64)
    m = x.max(axis=-1, keepdims=True)
    lse = m + np.log(np.exp(x - m).sum(axis=-1, keepdims=True))
    return np.exp(x - lse), x - lse


@pytest.mark.parametrize("shape,scale", [((7, 1000), 10), ((5, 37), 3), ((3, 10000), 30)])
def test_softmax_float32_rows_accuracy(shape, scale):
    # float32 over the last dim has its own vectorized rows (float exp)
    rng = np.random.default_rng(8)
    x = (rng.standard_normal(shape) * scale).astype(np.float32)
    sm_ref, lsm_ref = _softmax_ref(x)
    sm, lsm = N(nn.softmax_forward(T(x), -1)), N(nn.log_softmax_forward(T(x), 1))
    # exp(x - lse) carries float32's rounding of x - max, relative to |x - lse|
    big = sm_ref > 1e-30   # away from float32's subnormals
    rel = np.abs(sm[big] / sm_ref[big] - 1)
    assert (rel < 1e-6 + 1.2e-7 * np.abs(lsm_ref[big])).all()
    assert rel[sm_ref[big] > 1e-4].max() < 1e-6
    np.testing.assert_allclose(lsm, lsm_ref, rtol=2e-6, atol=2e-6)
    gy = rng.standard_normal(shape).astype(np.float32)
    y64, g64 = sm.astype(np.float64), gy.astype(np.float64)
    ref = y64 * (g64 - (g64 * y64).sum(axis=-1, keepdims=True))
    np.testing.assert_allclose(N(nn.softmax_backward_input(T(gy), T(sm), 1)), ref,
                               rtol=1e-5, atol=2e-6 * np.abs(ref).max())
    l64 = lsm.astype(np.float64)
    ref = g64 - np.exp(l64) * g64.sum(axis=-1, keepdims=True)
    np.testing.assert_allclose(N(nn.log_softmax_backward_input(T(gy), T(lsm), 1)), ref,
                               rtol=1e-5, atol=2e-6 * np.abs(ref).max())


def test_softmax_float32_rows_extremes():
    inf, nan = np.inf, np.nan
    x = np.array([[0, -50, -87.5, -90, -100, -103, -110, -1e30],   # tiny and subnormal results
                  [0, -inf, 3, -inf, 1, 2, -inf, 0],
                  [-inf] * 8,                                    # all -inf: NaN
                  [1, 2, nan, 3, 4, 5, 6, 7],                    # NaN: NaN row
                  [1, inf, 3, 4, 5, 6, 7, 8],                    # inf: NaN row
                  [-3e38, 0, 1, 2, 3, 4, 5, -3e38]], np.float32)
    with np.errstate(invalid="ignore", over="ignore"):
        sm_ref, lsm_ref = _softmax_ref(x)
    sm, lsm = N(nn.softmax_forward(T(x), 1)), N(nn.log_softmax_forward(T(x), 1))
    np.testing.assert_array_equal(np.isnan(sm), np.isnan(sm_ref))
    np.testing.assert_allclose(sm, sm_ref.astype(np.float32), rtol=2e-6, atol=3e-45)
    np.testing.assert_array_equal(np.isnan(lsm), np.isnan(lsm_ref))
    np.testing.assert_allclose(lsm, lsm_ref, rtol=2e-6)
    assert sm[0, 4] > 0 and sm[0, 6] == 0 and sm[0, 7] == 0   # exp(-100) is a float32 subnormal


ACTS = [("relu", 0, 0, lambda x: np.maximum(x, 0)),
        ("leaky_relu", 0.1, 0, lambda x: np.where(x > 0, x, 0.1 * x)),
        ("elu", 1.5, 0, lambda x: np.where(x > 0, x, 1.5 * np.expm1(x))),
        ("selu", 0, 0, lambda x: 1.0507009873554805 * np.where(x > 0, x, 1.6732632423543772 * np.expm1(x))),
        ("gelu", 0, 0, None), ("gelu", 1, 0, lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))),
        ("silu", 0, 0, lambda x: x / (1 + np.exp(-x))),
        ("sigmoid", 0, 0, lambda x: 1 / (1 + np.exp(-x))),
        ("tanh", 0, 0, np.tanh),
        ("softplus", 2, 20, lambda x: np.log1p(np.exp(2 * x)) / 2),
        ("hardtanh", -0.5, 0.7, lambda x: np.clip(x, -0.5, 0.7)),
        ("hardswish", 0, 0, lambda x: x * np.clip(x + 3, 0, 6) / 6),
        ("mish", 0, 0, lambda x: x * np.tanh(np.log1p(np.exp(x))))]


@pytest.mark.parametrize("name,a,b,ref", ACTS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_activation(name, a, b, ref, dtype):
    x = (np.random.default_rng(8).standard_normal((4, 7)) * 3).astype(dtype)
    x[np.abs(x) < 1e-3] = 0.5  # keep away from kinks for the FD check
    x[np.abs(np.abs(x) - 3) < 1e-3] = 1.0
    y = N(nn.activation_forward(name, T(x), a, b))
    if ref is None:
        from math import erf
        ref = np.vectorize(lambda v: 0.5 * v * (1 + erf(v / np.sqrt(2))))
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(y, ref(x.astype(np.float64)), rtol=tol, atol=tol)
    if dtype == np.float64:
        x = x[(np.abs(x - a) > 1e-3) & (np.abs(x - b) > 1e-3)] if name == "hardtanh" else x
        fd_check(lambda x: N(nn.activation_forward(name, T(x), a, b)), [x],
                 lambda gy: [N(nn.activation_backward_input(name, T(gy), T(x), a, b))])


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
