"""conv3d, conv_transpose2d, max/avg_pool3d, adaptive_max_pool2d and the
1-d poolings: forward against direct NumPy float64 loops, every backward
by float64 finite differences, PyTorch where installed, bad input."""
import itertools

import numpy as np
import pytest

import ember.th as th
import ember.thnn as nn
from test_kernels import N, T, fd_check

DT = {np.float32: th.float32, np.float64: th.float64}


def tol(dtype):
    return 2e-4 if dtype == np.float32 else 1e-10


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


# ---- references: direct loops over output positions ----------------------
def conv3d_ref(x, w, b, s, p, d, g):
    n, c, D, H, W = x.shape
    o, cg, kd, kh, kw = w.shape
    od, oh, ow = ((sz + 2 * p[i] - d[i] * (k - 1) - 1) // s[i] + 1
                  for i, (sz, k) in enumerate(zip((D, H, W), (kd, kh, kw))))
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0)) + tuple((q, q) for q in p))
    out = np.zeros((n, o, od, oh, ow))
    og = o // g
    for oc in range(o):
        gi = oc // og
        for z, y, v in itertools.product(range(od), range(oh), range(ow)):
            patch = xp[:, gi * cg:(gi + 1) * cg,
                       z * s[0]:z * s[0] + d[0] * (kd - 1) + 1:d[0],
                       y * s[1]:y * s[1] + d[1] * (kh - 1) + 1:d[1],
                       v * s[2]:v * s[2] + d[2] * (kw - 1) + 1:d[2]]
            out[:, oc, z, y, v] = (patch * w[oc]).sum(axis=(1, 2, 3, 4))
    if b is not None:
        out += b[None, :, None, None, None]
    return out


def conv_transpose2d_ref(x, w, b, s, p, op, d, g):
    """Every input element scatters weight * value onto the output."""
    n, c, H, W = x.shape
    _, og, kh, kw = w.shape
    cg = c // g
    full = [(H - 1) * s[0] + d[0] * (kh - 1) + 1 + op[0],
            (W - 1) * s[1] + d[1] * (kw - 1) + 1 + op[1]]
    out = np.zeros((n, og * g, full[0], full[1]))
    for ci, h, v, i, j in itertools.product(range(c), range(H), range(W), range(kh), range(kw)):
        gi = ci // cg
        out[:, gi * og:(gi + 1) * og, h * s[0] + i * d[0], v * s[1] + j * d[1]] += \
            x[:, ci, h, v, None] * w[ci, :, i, j][None, :]
    out = out[:, :, p[0]:full[0] - p[0], p[1]:full[1] - p[1]]
    if b is not None:
        out = out + b[None, :, None, None]
    return out


def _osz(i, k, s, p, d, ceil):
    span = i + 2 * p - d * (k - 1) - 1
    o = (-(-span // s) if ceil else span // s) + 1
    if ceil and (o - 1) * s >= i + p:
        o -= 1
    return o


def max_pool3d_ref(x, k, s, p, d, ceil):
    """(output, flat indices); the first maximum of each window wins."""
    lead, vol = x.shape[:-3], x.shape[-3:]
    outs = [_osz(vol[i], k[i], s[i], p[i], d[i], ceil) for i in range(3)]
    flat = x.reshape(-1, *vol)
    out = np.full((flat.shape[0], *outs), -np.inf)
    ind = np.full((flat.shape[0], *outs), -1, dtype=np.int64)
    for pl in range(flat.shape[0]):
        for o in itertools.product(*(range(v) for v in outs)):
            for kk in itertools.product(*(range(v) for v in k)):
                pos = [o[i] * s[i] - p[i] + kk[i] * d[i] for i in range(3)]
                if all(0 <= pos[i] < vol[i] for i in range(3)):
                    val = flat[pl][tuple(pos)]
                    if ind[pl][o] < 0 or val > out[pl][o]:
                        out[pl][o] = val
                        ind[pl][o] = (pos[0] * vol[1] + pos[1]) * vol[2] + pos[2]
    return out.reshape(*lead, *outs), ind.reshape(*lead, *outs)


def avg_pool3d_ref(x, k, s, p, ceil, cip, divisor):
    lead, vol = x.shape[:-3], x.shape[-3:]
    outs = [_osz(vol[i], k[i], s[i], p[i], 1, ceil) for i in range(3)]
    flat = x.reshape(-1, *vol).astype(np.float64)
    out = np.zeros((flat.shape[0], *outs))
    for o in itertools.product(*(range(v) for v in outs)):
        lo = [o[i] * s[i] - p[i] for i in range(3)]
        hi = [min(lo[i] + k[i], vol[i] + p[i]) for i in range(3)]
        padded = np.prod([hi[i] - lo[i] for i in range(3)])
        lo, hi = [max(v, 0) for v in lo], [min(hi[i], vol[i]) for i in range(3)]
        win = flat[:, lo[0]:hi[0], lo[1]:hi[1], lo[2]:hi[2]]
        n = divisor or (padded if cip else win[0].size)
        out[(slice(None),) + o] = win.sum(axis=(1, 2, 3)) / n
    return out.reshape(*lead, *outs)


def adaptive_max_pool2d_ref(x, oh, ow):
    H, W = x.shape[-2:]
    flat = x.reshape(-1, H, W)
    out = np.zeros((flat.shape[0], oh, ow))
    ind = np.zeros((flat.shape[0], oh, ow), dtype=np.int64)
    for i, j in itertools.product(range(oh), range(ow)):
        h0, h1 = i * H // oh, -(-(i + 1) * H // oh)
        w0, w1 = j * W // ow, -(-(j + 1) * W // ow)
        win = flat[:, h0:h1, w0:w1].reshape(flat.shape[0], -1)
        a = win.argmax(axis=1)
        out[:, i, j] = win[np.arange(len(a)), a]
        ind[:, i, j] = (h0 + a // (w1 - w0)) * W + w0 + a % (w1 - w0)
    return out.reshape(*x.shape[:-2], oh, ow), ind.reshape(*x.shape[:-2], oh, ow)


# ---- conv3d ------------------------------------------------------------
CONV3D_CASES = [  # (N, C, D, H, W), (O, kD, kH, kW), stride, padding, dilation, groups
    ((2, 3, 4, 5, 4), (4, 3, 3, 3), (1, 1, 1), (1, 1, 1), (1, 1, 1), 1),
    ((1, 4, 5, 6, 5), (6, 2, 3, 2), (2, 1, 2), (0, 1, 1), (1, 2, 1), 2),
    ((2, 2, 3, 4, 6), (2, 1, 1, 3), (1, 2, 1), (0, 0, 2), (1, 1, 2), 2),
    ((1, 3, 6, 5, 5), (3, 2, 2, 2), (2, 2, 2), (1, 0, 1), (2, 2, 1), 3),
]


@pytest.mark.parametrize("case", CONV3D_CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_conv3d_forward(case, dtype):
    shape, (o, *k), s, p, d, g = case
    rng = np.random.default_rng(100)
    x = rng.standard_normal(shape).astype(dtype)
    w = rng.standard_normal((o, shape[1] // g, *k)).astype(dtype)
    b = rng.standard_normal(o).astype(dtype)
    ref = conv3d_ref(x, w, b, s, p, d, g)
    y = nn.conv3d_forward(T(x), T(w), T(b), s, p, d, g)
    assert y.dtype == DT[dtype]
    np.testing.assert_allclose(N(y), ref, rtol=tol(dtype), atol=tol(dtype))
    np.testing.assert_allclose(N(nn.conv3d_forward(T(x), T(w), None, s, p, d, g)),
                               conv3d_ref(x, w, None, s, p, d, g), rtol=tol(dtype), atol=tol(dtype))


@pytest.mark.parametrize("case", CONV3D_CASES)
def test_conv3d_backward_fd(case):
    shape, (o, *k), s, p, d, g = case
    rng = np.random.default_rng(101)
    x = rng.standard_normal(shape)
    w = rng.standard_normal((o, shape[1] // g, *k))
    b = rng.standard_normal(o)

    def bwd(gy):
        gi = nn.conv3d_backward_input(T(gy), x.shape, T(w), s, p, d, g)
        gw, gb = nn.conv3d_backward_params(T(gy), T(x), w.shape, s, p, d, g)
        return [N(gi), N(gw), N(gb)]
    fd_check(lambda x, w, b: N(nn.conv3d_forward(T(x), T(w), T(b), s, p, d, g)), [x, w, b], bwd)


def test_conv3d_strided_inputs_and_partial_params():
    rng = np.random.default_rng(102)
    x = rng.standard_normal((3, 2, 6, 4, 4))
    w = rng.standard_normal((4, 3, 3, 2, 2)).transpose(0, 3, 4, 1, 2)  # (4, 2, 2, 3, 3)
    xt = T(np.ascontiguousarray(x.transpose(2, 1, 0, 3, 4))).permute(2, 1, 0, 3, 4)
    wt = T(np.ascontiguousarray(w.transpose(0, 3, 4, 1, 2))).permute(0, 3, 4, 1, 2)
    assert not xt.is_contiguous() and not wt.is_contiguous()
    s, p = (1, 2, 1), (1, 0, 0)
    y = nn.conv3d_forward(xt, wt, None, s, p)
    np.testing.assert_allclose(N(y), conv3d_ref(x, w, None, s, p, (1, 1, 1), 1),
                               rtol=1e-10, atol=1e-10)
    gy = rng.standard_normal(tuple(y.shape))
    gw, gb = nn.conv3d_backward_params(T(gy), xt, w.shape, s, p, need_weight=False)
    assert gw is None
    np.testing.assert_allclose(N(gb), gy.sum(axis=(0, 2, 3, 4)), rtol=1e-12)
    gw, gb = nn.conv3d_backward_params(T(gy), xt, w.shape, s, p, need_bias=False)
    gw_ref, _ = nn.conv3d_backward_params(T(gy), T(x), w.shape, s, p)
    assert gb is None
    np.testing.assert_allclose(N(gw), N(gw_ref), rtol=1e-12)
    gt = T(np.ascontiguousarray(gy.transpose(4, 3, 2, 1, 0))).permute(4, 3, 2, 1, 0)
    np.testing.assert_allclose(N(nn.conv3d_backward_input(gt, x.shape, wt, s, p)),
                               N(nn.conv3d_backward_input(T(gy), x.shape, T(w), s, p)), rtol=1e-12)


def test_conv3d_and_conv_transpose2d_in_several_column_bands():
    """Sizes whose column buffer exceeds one band (about 1 MB): the bands
    must tile every window row exactly once."""
    rng = np.random.default_rng(103)
    x, w = rng.standard_normal((2, 8, 9, 10, 21)), rng.standard_normal((3, 8, 3, 3, 3))
    b = rng.standard_normal(3)
    s, p = (1, 1, 1), (1, 1, 1)
    np.testing.assert_allclose(N(nn.conv3d_forward(T(x), T(w), T(b), s, p)),
                               conv3d_ref(x, w, b, s, p, (1, 1, 1), 1), rtol=1e-10, atol=1e-10)

    def bwd3(gy):
        gw, gb = nn.conv3d_backward_params(T(gy), T(x), w.shape, s, p)
        return [N(nn.conv3d_backward_input(T(gy), x.shape, T(w), s, p)), N(gw), N(gb)]
    fd_check(lambda x, w, b: N(nn.conv3d_forward(T(x), T(w), T(b), s, p)), [x, w, b], bwd3)

    x, w = rng.standard_normal((2, 2, 37, 33)), rng.standard_normal((2, 16, 4, 4))
    b = rng.standard_normal(16)
    np.testing.assert_allclose(N(nn.conv_transpose2d_forward(T(x), T(w), T(b), 2, 1)),
                               conv_transpose2d_ref(x, w, b, (2, 2), (1, 1), (0, 0), (1, 1), 1),
                               rtol=1e-10, atol=1e-10)

    def bwdt(gy):
        gw, gb = nn.conv_transpose2d_backward_params(T(gy), T(x), w.shape, 2, 1)
        return [N(nn.conv_transpose2d_backward_input(T(gy), x.shape, T(w), 2, 1)), N(gw), N(gb)]
    fd_check(lambda x, w, b: N(nn.conv_transpose2d_forward(T(x), T(w), T(b), 2, 1)), [x, w, b], bwdt)


def test_conv3d_empty_batch():
    x, w = th.randn(0, 2, 3, 3, 3), th.randn(4, 2, 2, 2, 2)
    y = nn.conv3d_forward(x, w, th.randn(4))
    assert tuple(y.shape) == (0, 4, 2, 2, 2)
    gw, gb = nn.conv3d_backward_params(th.randn(0, 4, 2, 2, 2), x, w.shape)
    np.testing.assert_array_equal(N(gw), 0)
    np.testing.assert_array_equal(N(gb), 0)
    assert tuple(nn.conv3d_backward_input(th.randn(0, 4, 2, 2, 2), x.shape, w).shape) == (0, 2, 3, 3, 3)


def test_conv3d_bad_input():
    x, w = th.randn(2, 3, 4, 4, 4), th.randn(4, 2, 3, 3, 3)
    before = N(x).copy()
    with pytest.raises(RuntimeError, match=r"expected input\[2, 3, 4, 4, 4\] to have 2 channels"):
        nn.conv3d_forward(x, w)
    np.testing.assert_array_equal(N(x), before)
    with pytest.raises(RuntimeError, match="Expected 5-dimensional input for 5-dimensional weight"):
        nn.conv3d_forward(th.randn(3, 4, 4, 4), th.randn(4, 3, 3, 3, 3))
    with pytest.raises(RuntimeError, match="Input type"):
        nn.conv3d_forward(th.randn(1, 3, 4, 4, 4, dtype=th.float64), th.randn(4, 3, 3, 3, 3))
    with pytest.raises(RuntimeError, match=r"padded input size per channel: \(2 x 6 x 6\). "
                                           r"Kernel size: \(3 x 3 x 3\)"):
        nn.conv3d_forward(th.randn(1, 3, 2, 4, 4), th.randn(4, 3, 3, 3, 3), None, 1, (0, 1, 1))
    with pytest.raises(RuntimeError, match=r"out_channels \(5\) must be divisible by groups \(2\)"):
        nn.conv3d_forward(th.randn(1, 4, 4, 4, 4), th.randn(5, 2, 3, 3, 3), groups=2)
    with pytest.raises(RuntimeError, match="non-positive stride"):
        nn.conv3d_forward(th.randn(1, 3, 4, 4, 4), th.randn(4, 3, 3, 3, 3), None, 0)
    with pytest.raises(TypeError, match="Float or Double"):
        nn.conv3d_forward(th.ones(1, 3, 4, 4, 4, dtype=th.int64), th.randn(4, 3, 3, 3, 3))
    with pytest.raises(RuntimeError, match=r"expected grad_output of shape \[2, 4, 2, 2, 2\]"):
        nn.conv3d_backward_input(th.randn(2, 4, 3, 3, 3), (2, 2, 4, 4, 4), w)
    with pytest.raises(RuntimeError, match=r"expected a non-empty kernel, but got weight of size "
                                           r"\[4, 3, 3, 0, 3\]"):
        nn.conv3d_forward(x, th.randn(4, 3, 3, 0, 3))
    with pytest.raises(ValueError, match="stride must be an int or a sequence of 3 ints"):
        nn.conv3d_forward(x, th.randn(4, 3, 3, 3, 3), None, (1, 2))


# ---- conv_transpose2d ----------------------------------------------------
CONVT_CASES = [  # (N, C, H, W), (O/g, kH, kW), stride, padding, output_padding, dilation, groups
    ((2, 3, 4, 5), (2, 3, 3), (1, 1), (0, 0), (0, 0), (1, 1), 1),
    ((2, 4, 5, 4), (3, 4, 4), (2, 2), (1, 1), (0, 0), (1, 1), 1),
    ((1, 4, 3, 4), (3, 3, 2), (2, 3), (1, 0), (1, 2), (1, 2), 2),
    ((2, 6, 4, 3), (1, 2, 3), (3, 1), (0, 1), (2, 0), (2, 1), 3),
    ((1, 2, 3, 3), (2, 3, 3), (1, 1), (1, 1), (1, 1), (2, 2), 1),  # op < dilation
]


@pytest.mark.parametrize("case", CONVT_CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_conv_transpose2d_forward(case, dtype):
    shape, (og, kh, kw), s, p, op, d, g = case
    rng = np.random.default_rng(110)
    x = rng.standard_normal(shape).astype(dtype)
    w = rng.standard_normal((shape[1], og, kh, kw)).astype(dtype)
    b = rng.standard_normal(og * g).astype(dtype)
    ref = conv_transpose2d_ref(x.astype(np.float64), w.astype(np.float64), b, s, p, op, d, g)
    y = nn.conv_transpose2d_forward(T(x), T(w), T(b), s, p, op, d, g)
    np.testing.assert_allclose(N(y), ref, rtol=tol(dtype), atol=tol(dtype))
    y0 = nn.conv_transpose2d_forward(T(x), T(w), None, s, p, op, d, g)
    np.testing.assert_allclose(N(y0), ref - b[None, :, None, None], rtol=tol(dtype), atol=tol(dtype))


@pytest.mark.parametrize("case", CONVT_CASES)
def test_conv_transpose2d_backward_fd(case):
    shape, (og, kh, kw), s, p, op, d, g = case
    rng = np.random.default_rng(111)
    x = rng.standard_normal(shape)
    w = rng.standard_normal((shape[1], og, kh, kw))
    b = rng.standard_normal(og * g)

    def bwd(gy):
        gi = nn.conv_transpose2d_backward_input(T(gy), x.shape, T(w), s, p, op, d, g)
        gw, gb = nn.conv_transpose2d_backward_params(T(gy), T(x), w.shape, s, p, op, d, g)
        return [N(gi), N(gw), N(gb)]
    fd_check(lambda x, w, b: N(nn.conv_transpose2d_forward(T(x), T(w), T(b), s, p, op, d, g)),
             [x, w, b], bwd)


def test_conv_transpose2d_is_the_adjoint_of_conv2d():
    """<conv_transpose2d(x), y> = <x, conv2d(y)> with the same weight."""
    rng = np.random.default_rng(112)
    x, w = rng.standard_normal((2, 6, 5, 4)), rng.standard_normal((6, 2, 3, 3))
    s, p, op, d, g = (2, 1), (1, 0), (1, 0), (1, 2), 3
    y = nn.conv_transpose2d_forward(T(x), T(w), None, s, p, op, d, g)
    z = rng.standard_normal(tuple(y.shape))
    back = nn.conv2d_forward(T(z), T(w), None, s, p, d, g)
    assert tuple(back.shape) == x.shape
    np.testing.assert_allclose(np.sum(N(y) * z), np.sum(x * N(back)), rtol=1e-10)
    np.testing.assert_allclose(N(nn.conv_transpose2d_backward_input(T(z), x.shape, T(w), s, p, op, d, g)),
                               N(back), rtol=1e-12, atol=1e-12)


def test_conv_transpose2d_strided_input():
    rng = np.random.default_rng(113)
    x, w = rng.standard_normal((3, 2, 4, 5)), rng.standard_normal((2, 3, 2, 2))
    xt = T(np.ascontiguousarray(x.transpose(3, 2, 1, 0))).permute(3, 2, 1, 0)
    assert not xt.is_contiguous()
    np.testing.assert_allclose(N(nn.conv_transpose2d_forward(xt, T(w), None, 2)),
                               conv_transpose2d_ref(x, w, None, (2, 2), (0, 0), (0, 0), (1, 1), 1),
                               rtol=1e-12, atol=1e-12)


def test_conv_transpose2d_bad_input():
    x, w = th.randn(2, 3, 5, 5), th.randn(4, 2, 3, 3)
    with pytest.raises(RuntimeError, match=r"Given transposed=1, weight of size \[4, 2, 3, 3\], "
                                           r"expected input\[2, 3, 5, 5\] to have 4 channels"):
        nn.conv_transpose2d_forward(x, w)
    with pytest.raises(RuntimeError, match="output padding must be smaller than either stride "
                                           "or dilation, but got output_padding_height: 2"):
        nn.conv_transpose2d_forward(x, th.randn(3, 2, 3, 3), None, 2, 0, (2, 0))
    with pytest.raises(RuntimeError, match="Expected 4-dimensional input for 4-dimensional weight"):
        nn.conv_transpose2d_forward(th.randn(3, 5, 5), th.randn(3, 2, 3, 3))
    with pytest.raises(RuntimeError, match=r"in_channels \(3\) must be divisible by groups \(2\)"):
        nn.conv_transpose2d_forward(x, th.randn(3, 2, 3, 3), groups=2)
    with pytest.raises(RuntimeError, match=r"Calculated output size per channel: \(-1 x -1\). "
                                           "Output size is too small"):
        nn.conv_transpose2d_forward(th.randn(1, 3, 1, 1), th.randn(3, 2, 1, 1), None, 1, 1)
    with pytest.raises(RuntimeError, match="Input type"):
        nn.conv_transpose2d_forward(x.double(), th.randn(3, 2, 3, 3))
    with pytest.raises(RuntimeError, match=r"expected grad_output of shape \[2, 2, 7, 7\]"):
        nn.conv_transpose2d_backward_input(th.randn(2, 2, 6, 6), x.shape, th.randn(3, 2, 3, 3))


# ---- 3-d pooling ---------------------------------------------------------
POOL3D_CASES = [  # shape, kernel, stride, padding, dilation, ceil_mode
    ((2, 2, 5, 6, 5), (2, 2, 2), (2, 2, 2), (0, 0, 0), (1, 1, 1), False),
    ((1, 3, 6, 5, 7), (3, 2, 3), (2, 1, 2), (1, 1, 1), (1, 1, 1), True),
    ((2, 4, 5, 5, 4), (2, 3, 2), (1, 2, 3), (1, 1, 0), (2, 1, 1), True),
    ((3, 4, 5, 6), (3, 3, 3), (2, 2, 2), (1, 0, 1), (1, 2, 1), False),  # unbatched
]


@pytest.mark.parametrize("case", POOL3D_CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_max_pool3d(case, dtype):
    shape, k, s, p, d, ceil = case
    x = np.random.default_rng(120).standard_normal(shape).astype(dtype)
    y, ind = nn.max_pool3d_forward(T(x), k, s, p, d, ceil)
    ref, ref_ind = max_pool3d_ref(x, k, s, p, d, ceil)
    np.testing.assert_array_equal(N(y), ref)
    np.testing.assert_array_equal(N(ind), ref_ind)

    x = x.astype(np.float64)
    _, ind = nn.max_pool3d_forward(T(x), k, s, p, d, ceil)
    fd_check(lambda x: N(nn.max_pool3d_forward(T(x), k, s, p, d, ceil)[0]), [x],
             lambda gy: [N(nn.max_pool3d_backward_input(T(gy), x.shape, ind))])


def test_max_pool3d_ties_nan_and_padding_only_windows():
    x = np.zeros((1, 1, 2, 2, 2))
    y, ind = nn.max_pool3d_forward(T(x), 2)
    assert N(ind).item() == 0  # first of equal maxima
    x[0, 0, 1, 0, 1] = np.nan
    x[0, 0, 1, 1, 1] = np.nan
    y, ind = nn.max_pool3d_forward(T(x), 2)
    assert np.isnan(N(y).item()) and N(ind).item() == 5
    # kernel 2, dilation 3, padding 1 on a length-2 dim: the window reads
    # positions -1 and 2, both outside: -inf, index -1, no gradient
    y, ind = nn.max_pool3d_forward(th.ones(1, 1, 1, 1, 2, dtype=th.float64), (1, 1, 2), 1,
                                   (0, 0, 1), (1, 1, 3))
    assert N(y).ravel().tolist() == [-np.inf] and N(ind).ravel().tolist() == [-1]
    gi = nn.max_pool3d_backward_input(th.ones(1, 1, 1, 1, 1, dtype=th.float64), (1, 1, 1, 1, 2), ind)
    np.testing.assert_array_equal(N(gi), 0)


@pytest.mark.parametrize("case", POOL3D_CASES)
@pytest.mark.parametrize("cip,divisor", [(True, None), (False, None), (True, 5), (False, -3)])
def test_avg_pool3d(case, cip, divisor):
    shape, k, s, p, _, ceil = case
    x = np.random.default_rng(121).standard_normal(shape)
    y = nn.avg_pool3d_forward(T(x), k, s, p, ceil, cip, divisor)
    np.testing.assert_allclose(N(y), avg_pool3d_ref(x, k, s, p, ceil, cip, divisor), rtol=1e-12,
                               atol=1e-14)
    y32 = nn.avg_pool3d_forward(T(x.astype(np.float32)), k, s, p, ceil, cip, divisor)
    np.testing.assert_allclose(N(y32), N(y), rtol=1e-5, atol=1e-6)
    fd_check(lambda x: N(nn.avg_pool3d_forward(T(x), k, s, p, ceil, cip, divisor)), [x],
             lambda gy: [N(nn.avg_pool3d_backward_input(T(gy), x.shape, k, s, p, ceil, cip,
                                                        divisor))])


def test_pool3d_strided_and_empty_batch():
    rng = np.random.default_rng(122)
    x = rng.standard_normal((2, 3, 4, 5, 6))
    xt = T(np.ascontiguousarray(x.transpose(4, 3, 2, 1, 0))).permute(4, 3, 2, 1, 0)
    np.testing.assert_array_equal(N(nn.max_pool3d_forward(xt, 2)[0]),
                                  max_pool3d_ref(x, (2,) * 3, (2,) * 3, (0,) * 3, (1,) * 3, False)[0])
    np.testing.assert_allclose(N(nn.avg_pool3d_forward(xt, 3, 1, 1)),
                               avg_pool3d_ref(x, (3,) * 3, (1,) * 3, (1,) * 3, False, True, None),
                               rtol=1e-12)
    y, ind = nn.max_pool3d_forward(th.randn(0, 2, 4, 4, 4), 2)
    assert tuple(y.shape) == (0, 2, 2, 2, 2) == tuple(ind.shape)
    assert tuple(nn.avg_pool3d_forward(th.randn(0, 2, 4, 4, 4), 2).shape) == (0, 2, 2, 2, 2)


def test_pool3d_large_enough_for_threads():
    """Big enough for the thread pool over volumes (planes * outputs *
    kernel above the grain); blocks of 2x2x2 against NumPy reshapes."""
    x = np.random.default_rng(123).standard_normal((2, 8, 16, 16, 16))
    blocks = x.reshape(2, 8, 8, 2, 8, 2, 8, 2).transpose(0, 1, 2, 4, 6, 3, 5, 7).reshape(
        2, 8, 8, 8, 8, 8)
    y, ind = nn.max_pool3d_forward(T(x), 2)
    np.testing.assert_array_equal(N(y), blocks.max(-1))
    flat = x.reshape(2, 8, -1)
    np.testing.assert_array_equal(np.take_along_axis(flat, N(ind).reshape(2, 8, -1), 2),
                                  N(y).reshape(2, 8, -1))
    gy = np.random.default_rng(124).standard_normal(y.shape)
    gi = N(nn.max_pool3d_backward_input(T(gy), x.shape, ind))
    np.testing.assert_allclose(gi.sum(axis=(2, 3, 4)), gy.sum(axis=(2, 3, 4)), rtol=1e-12)
    assert np.count_nonzero(gi) == gy.size
    np.testing.assert_allclose(N(nn.avg_pool3d_forward(T(x), 2)), blocks.mean(-1), rtol=1e-12)
    ga = N(nn.avg_pool3d_backward_input(T(gy), x.shape, 2))
    np.testing.assert_allclose(ga, np.repeat(np.repeat(np.repeat(gy, 2, 2), 2, 3), 2, 4) / 8,
                               rtol=1e-12)


def test_pool3d_bad_input():
    with pytest.raises(RuntimeError, match=r"Expected 4D or 5D \(batch mode\) tensor for input, "
                                           r"but got: \[4, 4, 4\]"):
        nn.max_pool3d_forward(th.randn(4, 4, 4), 2)
    with pytest.raises(RuntimeError, match="pad should be at most half of kernel size"):
        nn.avg_pool3d_forward(th.randn(1, 1, 4, 4, 4), 2, 1, (0, 2, 0))
    with pytest.raises(RuntimeError, match="non-batch dimension 3 has length zero"):
        nn.max_pool3d_forward(th.randn(1, 1, 4, 0, 4), 2)
    with pytest.raises(RuntimeError, match="too small"):
        nn.max_pool3d_forward(th.randn(1, 1, 4, 1, 4), 2)
    with pytest.raises(RuntimeError, match="divisor must be not zero"):
        nn.avg_pool3d_forward(th.randn(1, 1, 4, 4, 4), 2, divisor_override=0)
    with pytest.raises(TypeError, match="Float or Double"):
        nn.avg_pool3d_forward(th.ones(1, 1, 4, 4, 4, dtype=th.int64), 2)
    x = th.randn(1, 2, 4, 4, 4, dtype=th.float64)
    y, ind = nn.max_pool3d_forward(x, 2)
    bad = ind.clone()
    bad.view(-1)[3] = 64
    with pytest.raises(IndexError, match="index 64 out of range for an input plane of 64"):
        nn.max_pool3d_backward_input(y, x.shape, bad)
    with pytest.raises(TypeError, match="expected scalar type Long but found Double for indices"):
        nn.max_pool3d_backward_input(y, x.shape, y)
    with pytest.raises(RuntimeError, match=r"expected grad_output of shape \[1, 2, 2, 2, 2\]"):
        nn.avg_pool3d_backward_input(th.randn(1, 2, 3, 2, 2, dtype=th.float64), x.shape, 2)


# ---- adaptive max pooling -------------------------------------------------
@pytest.mark.parametrize("shape,osize", [((2, 3, 7, 5), (3, 2)), ((2, 6, 6), (3, 3)),
                                         ((1, 2, 5, 8), (5, 8)), ((1, 2, 4, 9), (6, 4))])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_adaptive_max_pool2d(shape, osize, dtype):
    x = np.random.default_rng(130).standard_normal(shape).astype(dtype)
    y, ind = nn.adaptive_max_pool2d_forward(T(x), osize)
    ref, ref_ind = adaptive_max_pool2d_ref(x, *osize)
    np.testing.assert_array_equal(N(y), ref)
    np.testing.assert_array_equal(N(ind), ref_ind)
    x = x.astype(np.float64)
    _, ind = nn.adaptive_max_pool2d_forward(T(x), osize)
    fd_check(lambda x: N(nn.adaptive_max_pool2d_forward(T(x), osize)[0]), [x],
             lambda gy: [N(nn.adaptive_max_pool2d_backward_input(T(gy), x.shape, ind))])


def test_adaptive_max_pool2d_none_size_and_bad_input():
    x = th.randn(2, 3, 6, 4)
    assert tuple(nn.adaptive_max_pool2d_forward(x, (None, 2))[0].shape) == (2, 3, 6, 2)
    with pytest.raises(RuntimeError, match="Expected 3D or 4D tensor"):
        nn.adaptive_max_pool2d_forward(th.randn(6, 4), 2)
    with pytest.raises(RuntimeError, match="dimension 2 being empty"):
        nn.adaptive_max_pool2d_forward(th.randn(1, 2, 0, 4), 2)
    with pytest.raises(RuntimeError, match="output_size must be positive"):
        nn.adaptive_max_pool2d_forward(x, (-1, 2))
    with pytest.raises(RuntimeError, match="positive output size"):
        nn.adaptive_max_pool2d_forward(x, (0, 2))
    y, ind = nn.adaptive_max_pool2d_forward(x, 2)
    with pytest.raises(RuntimeError, match="do not match grad_input"):
        nn.adaptive_max_pool2d_backward_input(y, (2, 4, 6, 4), ind)


# ---- 1-d pooling through the 2-d kernels -------------------------------------
def test_pool1d():
    rng = np.random.default_rng(140)
    x = rng.standard_normal((2, 3, 11))
    y, ind = nn.max_pool1d_forward(T(x), 3, 2, 1, 2, True)
    ref, ref_ind = max_pool3d_ref(x[:, :, None, None], (1, 1, 3), (1, 1, 2), (0, 0, 1), (1, 1, 2), True)
    np.testing.assert_array_equal(N(y), ref[:, :, 0, 0])
    np.testing.assert_array_equal(N(ind), ref_ind[:, :, 0, 0])
    fd_check(lambda x: N(nn.max_pool1d_forward(T(x), 3, 2, 1, 2, True)[0]), [x],
             lambda gy: [N(nn.max_pool1d_backward_input(T(gy), x.shape, ind))])

    for cip in (True, False):
        y = nn.avg_pool1d_forward(T(x[0]), 4, 3, 2, True, cip)  # unbatched (C, L)
        ref = avg_pool3d_ref(x[0][:, None, None], (1, 1, 4), (1, 1, 3), (0, 0, 2), True, cip, None)
        np.testing.assert_allclose(N(y), ref[:, 0, 0], rtol=1e-12)
        fd_check(lambda v: N(nn.avg_pool1d_forward(T(v), 4, 3, 2, True, cip)), [x[0]],
                 lambda gy: [N(nn.avg_pool1d_backward_input(T(gy), x[0].shape, 4, 3, 2, True, cip))])

    y, ind = nn.adaptive_max_pool1d_forward(T(x), 4)
    ref, ref_ind = adaptive_max_pool2d_ref(x[:, :, None], 1, 4)
    np.testing.assert_array_equal(N(y), ref[:, :, 0])
    np.testing.assert_array_equal(N(ind), ref_ind[:, :, 0])
    fd_check(lambda x: N(nn.adaptive_max_pool1d_forward(T(x), 4)[0]), [x],
             lambda gy: [N(nn.adaptive_max_pool1d_backward_input(T(gy), x.shape, ind))])

    y = nn.adaptive_avg_pool1d_forward(T(x), 4)
    cells = [(i * 11 // 4, -(-(i + 1) * 11 // 4)) for i in range(4)]
    np.testing.assert_allclose(N(y), np.stack([x[..., a:b].mean(-1) for a, b in cells], -1),
                               rtol=1e-12)
    fd_check(lambda x: N(nn.adaptive_avg_pool1d_forward(T(x), 4)), [x],
             lambda gy: [N(nn.adaptive_avg_pool1d_backward_input(T(gy), x.shape))])

    with pytest.raises(RuntimeError, match=r"max_pool1d: Expected 2D or 3D \(batch mode\) tensor"):
        nn.max_pool1d_forward(th.randn(1, 2, 3, 4), 2)
    with pytest.raises(RuntimeError, match="pad should be at most half"):
        nn.avg_pool1d_forward(th.randn(1, 2, 8), 2, 1, 2)


# ---- against PyTorch, where installed ------------------------------------
def _close(a, b, tol=1e-4):
    np.testing.assert_allclose(N(a), b.detach().numpy(), rtol=tol, atol=tol)


def test_torch_conv3d_and_conv_transpose2d(torch):
    F = torch.nn.functional
    rng = np.random.default_rng(150)
    f32 = lambda *s: rng.standard_normal(s).astype(np.float32)
    x, w, b = f32(2, 4, 5, 6, 5), f32(6, 2, 3, 2, 3), f32(6)
    args = ((2, 1, 1), (1, 0, 1), (1, 2, 1), 2)
    tx, tw, tb = (torch.from_numpy(v).requires_grad_() for v in (x, w, b))
    ty = F.conv3d(tx, tw, tb, *args)
    gy = rng.standard_normal(tuple(ty.shape)).astype(np.float32)
    ty.backward(torch.from_numpy(gy))
    _close(nn.conv3d_forward(T(x), T(w), T(b), *args), ty)
    _close(nn.conv3d_backward_input(T(gy), x.shape, T(w), *args), tx.grad)
    gw, gb = nn.conv3d_backward_params(T(gy), T(x), w.shape, *args)
    _close(gw, tw.grad, 1e-3)
    _close(gb, tb.grad, 1e-3)

    x, w, b = f32(2, 6, 5, 4), f32(6, 2, 3, 4), f32(6)
    s, p, op, d, g = (2, 3), (1, 2), (1, 2), (1, 2), 3
    tx, tw, tb = (torch.from_numpy(v).requires_grad_() for v in (x, w, b))
    ty = F.conv_transpose2d(tx, tw, tb, s, p, op, g, d)
    gy = rng.standard_normal(tuple(ty.shape)).astype(np.float32)
    ty.backward(torch.from_numpy(gy))
    _close(nn.conv_transpose2d_forward(T(x), T(w), T(b), s, p, op, d, g), ty)
    _close(nn.conv_transpose2d_backward_input(T(gy), x.shape, T(w), s, p, op, d, g), tx.grad)
    gw, gb = nn.conv_transpose2d_backward_params(T(gy), T(x), w.shape, s, p, op, d, g)
    _close(gw, tw.grad, 1e-3)
    _close(gb, tb.grad, 1e-3)


@pytest.mark.parametrize("ceil", [False, True])
def test_torch_pooling(torch, ceil):
    F = torch.nn.functional
    rng = np.random.default_rng(151)
    x = rng.standard_normal((2, 3, 7, 6, 9)).astype(np.float32)
    y, ind = nn.max_pool3d_forward(T(x), (3, 2, 3), (2, 2, 2), (1, 0, 1), (1, 2, 1), ceil)
    ty, tind = F.max_pool3d(torch.from_numpy(x), (3, 2, 3), (2, 2, 2), (1, 0, 1), (1, 2, 1),
                            ceil, return_indices=True)
    _close(y, ty, 0)
    np.testing.assert_array_equal(N(ind), tind.numpy())
    for cip, div in [(True, None), (False, None), (True, 7)]:
        _close(nn.avg_pool3d_forward(T(x), (3, 3, 2), (2, 1, 2), (1, 1, 1), ceil, cip, div),
               F.avg_pool3d(torch.from_numpy(x), (3, 3, 2), (2, 1, 2), (1, 1, 1), ceil, cip, div),
               1e-5)
    x2 = x[:, :, 0]
    y, ind = nn.adaptive_max_pool2d_forward(T(x2), (4, 5))
    ty, tind = F.adaptive_max_pool2d(torch.from_numpy(x2), (4, 5), return_indices=True)
    _close(y, ty, 0)
    np.testing.assert_array_equal(N(ind), tind.numpy())
    x1 = x[:, :, 0, 0]
    y, ind = nn.max_pool1d_forward(T(x1), 3, 2, 1, 2, ceil)
    ty, tind = F.max_pool1d(torch.from_numpy(x1), 3, 2, 1, 2, ceil, return_indices=True)
    _close(y, ty, 0)
    np.testing.assert_array_equal(N(ind), tind.numpy())
    _close(nn.avg_pool1d_forward(T(x1), 3, 2, 1, ceil, False),
           F.avg_pool1d(torch.from_numpy(x1), 3, 2, 1, ceil, False), 1e-6)

