"""ember.thnn kernels: forward against NumPy references, float64
finite-difference checks of every backward, bad-input errors."""
import numpy as np
import pytest

import ember.th as th
import ember.thnn as nn

DT = {np.float32: th.float32, np.float64: th.float64}


def T(a):
    return th.from_numpy(np.ascontiguousarray(a))


def N(t):
    return np.array(t.numpy())


def conv2d_ref(x, w, b, s, p, d, g):
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])))
    oh = (h + 2 * p[0] - d[0] * (kh - 1) - 1) // s[0] + 1
    ow = (wd + 2 * p[1] - d[1] * (kw - 1) - 1) // s[1] + 1
    out = np.zeros((n, o, oh, ow))
    og = o // g
    for gi in range(g):
        for i in range(kh):
            for j in range(kw):
                patch = xp[:, gi * cg:(gi + 1) * cg,
                           i * d[0]:i * d[0] + s[0] * (oh - 1) + 1:s[0],
                           j * d[1]:j * d[1] + s[1] * (ow - 1) + 1:s[1]]
                out[:, gi * og:(gi + 1) * og] += np.einsum(
                    "nchw,oc->nohw", patch, w[gi * og:(gi + 1) * og, :, i, j])
    if b is not None:
        out += b[None, :, None, None]
    return out


def fd_check(f, inputs, backward, eps=1e-6, rtol=1e-5, atol=1e-7, rng=None):
    """f(*numpy inputs) -> numpy output; backward(grad_out) -> list of grads
    (one per input, None to skip).  Compares <grad, dx> with a central
    difference along a random direction dx, for each input."""
    rng = rng or np.random.default_rng(0)
    y = f(*inputs)
    gy = rng.standard_normal(np.shape(y))
    grads = backward(gy)
    for k, (x, g) in enumerate(zip(inputs, grads)):
        if g is None:
            continue
        dx = rng.standard_normal(x.shape)
        xp = [a.copy() for a in inputs]
        xm = [a.copy() for a in inputs]
        xp[k] = x + eps * dx
        xm[k] = x - eps * dx
        num = np.sum(gy * (f(*xp) - f(*xm))) / (2 * eps)
        ana = np.sum(g * dx)
        assert abs(num - ana) <= atol + rtol * abs(num), (k, num, ana)


CONV_CASES = [  # (N, C, H, W), (O, kH, kW), stride, padding, dilation, groups
    ((2, 3, 7, 6), (4, 3, 3), (1, 1), (1, 1), (1, 1), 1),
    ((1, 4, 9, 8), (6, 3, 2), (2, 1), (0, 2), (1, 2), 2),
    ((3, 1, 6, 6), (2, 5, 5), (1, 1), (2, 2), (1, 1), 1),
    ((2, 4, 8, 8), (4, 3, 3), (2, 2), (1, 1), (2, 2), 4),
]


@pytest.mark.parametrize("case", CONV_CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_conv2d_forward(case, dtype):
    shape, (o, kh, kw), s, p, d, g = case
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape).astype(dtype)
    w = rng.standard_normal((o, shape[1] // g, kh, kw)).astype(dtype)
    b = rng.standard_normal(o).astype(dtype)
    y = nn.conv2d_forward(T(x), T(w), T(b), s, p, d, g)
    tol = 1e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(N(y), conv2d_ref(x, w, b, s, p, d, g), rtol=tol, atol=tol)
    y0 = nn.conv2d_forward(T(x), T(w), None, s, p, d, g)
    np.testing.assert_allclose(N(y0), conv2d_ref(x, w, None, s, p, d, g), rtol=tol, atol=tol)


@pytest.mark.parametrize("case", CONV_CASES)
def test_conv2d_backward_fd(case):
    shape, (o, kh, kw), s, p, d, g = case
    rng = np.random.default_rng(2)
    x = rng.standard_normal(shape)
    w = rng.standard_normal((o, shape[1] // g, kh, kw))
    b = rng.standard_normal(o)

    def f(x, w, b):
        return N(nn.conv2d_forward(T(x), T(w), T(b), s, p, d, g))

    def bwd(gy):
        gi = nn.conv2d_backward_input(T(gy), x.shape, T(w), s, p, d, g)
        gw, gb = nn.conv2d_backward_params(T(gy), T(x), w.shape, s, p, d, g)
        return [N(gi), N(gw), N(gb)]
    fd_check(f, [x, w, b], bwd)


def test_conv2d_bad_input():
    x, w = th.randn(2, 3, 5, 5), th.randn(4, 2, 3, 3)
    with pytest.raises(RuntimeError, match=r"expected input\[2, 3, 5, 5\] to have 2 channels"):
        nn.conv2d_forward(x, w)
    with pytest.raises(RuntimeError, match="Expected 4-dimensional input"):
        nn.conv2d_forward(th.randn(3, 5, 5), th.randn(4, 3, 3, 3))
    with pytest.raises(RuntimeError, match="Input type"):
        nn.conv2d_forward(th.randn(1, 3, 5, 5, dtype=th.float64), th.randn(4, 3, 3, 3))
    with pytest.raises(RuntimeError, match="too small"):
        nn.conv2d_forward(th.randn(1, 3, 2, 2), th.randn(4, 3, 3, 3))


def pool_ref(x, k, s, p, ceil, op, cip=True):
    n, c, h, w = x.shape
    def osz(i, k, s, p):
        span = i + 2 * p - k
        o = (-(-span // s) if ceil else span // s) + 1
        if ceil and (o - 1) * s >= i + p:
            o -= 1
        return o
    oh, ow = osz(h, k[0], s[0], p[0]), osz(w, k[1], s[1], p[1])
    out = np.zeros((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            h0, w0 = i * s[0] - p[0], j * s[1] - p[1]
            h1, w1 = min(h0 + k[0], h + p[0]), min(w0 + k[1], w + p[1])
            pool = (h1 - h0) * (w1 - w0)
            h0, w0, h1, w1 = max(h0, 0), max(w0, 0), min(h1, h), min(w1, w)
            win = x[:, :, h0:h1, w0:w1]
            if op == "max":
                out[:, :, i, j] = win.max(axis=(2, 3))
            else:
                out[:, :, i, j] = win.sum(axis=(2, 3)) / (pool if cip else win[0, 0].size)
    return out


POOL_CASES = [((2, 3, 7, 7), (3, 3), (2, 2), (1, 1), False),
              ((1, 2, 8, 6), (2, 2), (2, 2), (0, 0), False),
              ((2, 2, 7, 8), (3, 2), (2, 3), (1, 1), True)]


@pytest.mark.parametrize("case", POOL_CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_max_pool2d(case, dtype):
    shape, k, s, p, ceil = case
    x = np.random.default_rng(3).standard_normal(shape).astype(dtype)
    y, ind = nn.max_pool2d_forward(T(x), k, s, p, 1, ceil)
    np.testing.assert_allclose(N(y), pool_ref(x, k, s, p, ceil, "max"), rtol=1e-6)
    flat = x.reshape(shape[0], shape[1], -1)
    np.testing.assert_array_equal(np.take_along_axis(flat, N(ind).reshape(
        shape[0], shape[1], -1), 2).reshape(N(y).shape), N(y))

    x = x.astype(np.float64)
    f = lambda x: N(nn.max_pool2d_forward(T(x), k, s, p, 1, ceil)[0])
    fd_check(f, [x], lambda gy: [N(nn.max_pool2d_backward_input(T(gy), x.shape, nn.max_pool2d_forward(T(x), k, s, p, 1, ceil)[1]))])


@pytest.mark.parametrize("case", POOL_CASES)
@pytest.mark.parametrize("cip", [True, False])
def test_avg_pool2d(case, cip):
    shape, k, s, p, ceil = case
    x = np.random.default_rng(4).standard_normal(shape)
    y = nn.avg_pool2d_forward(T(x), k, s, p, ceil, cip)
    np.testing.assert_allclose(N(y), pool_ref(x, k, s, p, ceil, "avg", cip), rtol=1e-12)
    f = lambda x: N(nn.avg_pool2d_forward(T(x), k, s, p, ceil, cip))
    fd_check(f, [x], lambda gy: [N(nn.avg_pool2d_backward_input(T(gy), x.shape, k, s, p, ceil, cip))])


def test_pool_bad_input():
    with pytest.raises(RuntimeError, match="Expected 3D or 4D"):
        nn.max_pool2d_forward(th.randn(4, 4), 2)
    with pytest.raises(RuntimeError, match="pad should be at most half"):
        nn.avg_pool2d_forward(th.randn(1, 1, 4, 4), 2, 1, 2)


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


def test_errors_name_the_problem():
    with pytest.raises(TypeError, match="Float or Double"):
        nn.softmax_forward(th.tensor([1, 2, 3]), 0)
    with pytest.raises(IndexError, match="Dimension out of range"):
        nn.softmax_forward(th.randn(2, 3), 2)


def test_abi_and_entry_point():
    assert nn._lib.thnn_abi_version_major() == 1
    assert nn.kernels.conv2d_forward is nn.conv2d_forward
    from importlib.metadata import entry_points
    eps = [e for e in entry_points(group="ember.kernels") if e.name == "cpu"]
    if eps:  # only once installed
        assert eps[0].load() is nn.kernels


def test_bad_input_corrupts_nothing():
    """Checks run before any write: running statistics and the caller's
    tensors are untouched after an error."""
    x = th.randn(4, 3, 2, 2, dtype=th.float64)
    rm, rv = th.zeros(3, dtype=th.float64), th.ones(3, dtype=th.float64)
    with pytest.raises(RuntimeError, match=r"expected weight of shape \[3\]"):
        nn.batch_norm_forward(x, th.ones(4, dtype=th.float64), None, rm, rv, True)
    np.testing.assert_array_equal(N(rm), np.zeros(3))
    np.testing.assert_array_equal(N(rv), np.ones(3))
    with pytest.raises(ValueError, match="Expected more than 1 value per channel"):
        nn.batch_norm_forward(th.randn(1, 3, dtype=th.float64), None, None, rm, rv, True)
    np.testing.assert_array_equal(N(rm), np.zeros(3))
    before = N(x).copy()
    with pytest.raises(RuntimeError):
        nn.conv2d_forward(x, th.randn(2, 5, 3, 3, dtype=th.float64))
    np.testing.assert_array_equal(N(x), before)
