"""ember.thnn's convolutions (conv1d, conv2d, conv3d, conv_transpose2d):
forward against NumPy, float64 finite-difference backward, bad input."""
import itertools

import numpy as np
import pytest

import ember.th as th
import ember.thnn as nn

from thnn_testing import N, T, close_to_torch, fd_check, tol


DT = {np.float32: th.float32, np.float64: th.float64}


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
    close_to_torch(nn.conv3d_forward(T(x), T(w), T(b), *args), ty)
    close_to_torch(nn.conv3d_backward_input(T(gy), x.shape, T(w), *args), tx.grad)
    gw, gb = nn.conv3d_backward_params(T(gy), T(x), w.shape, *args)
    close_to_torch(gw, tw.grad, 1e-3)
    close_to_torch(gb, tb.grad, 1e-3)

    x, w, b = f32(2, 6, 5, 4), f32(6, 2, 3, 4), f32(6)
    s, p, op, d, g = (2, 3), (1, 2), (1, 2), (1, 2), 3
    tx, tw, tb = (torch.from_numpy(v).requires_grad_() for v in (x, w, b))
    ty = F.conv_transpose2d(tx, tw, tb, s, p, op, g, d)
    gy = rng.standard_normal(tuple(ty.shape)).astype(np.float32)
    ty.backward(torch.from_numpy(gy))
    close_to_torch(nn.conv_transpose2d_forward(T(x), T(w), T(b), s, p, op, d, g), ty)
    close_to_torch(nn.conv_transpose2d_backward_input(T(gy), x.shape, T(w), s, p, op, d, g), tx.grad)
    gw, gb = nn.conv_transpose2d_backward_params(T(gy), T(x), w.shape, s, p, op, d, g)
    close_to_torch(gw, tw.grad, 1e-3)
    close_to_torch(gb, tb.grad, 1e-3)


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
