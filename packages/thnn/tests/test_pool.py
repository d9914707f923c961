"""ember.thnn's poolings (max / avg in 1, 2 and 3 d, adaptive average and
max): forward against NumPy, backward, bad input."""
import itertools

import numpy as np
import pytest

import ember.th as th
import ember.thnn as nn

from thnn_testing import N, T, close_to_torch, fd_check


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


@pytest.mark.parametrize("ceil", [False, True])
def test_torch_pooling(torch, ceil):
    F = torch.nn.functional
    rng = np.random.default_rng(151)
    x = rng.standard_normal((2, 3, 7, 6, 9)).astype(np.float32)
    y, ind = nn.max_pool3d_forward(T(x), (3, 2, 3), (2, 2, 2), (1, 0, 1), (1, 2, 1), ceil)
    ty, tind = F.max_pool3d(torch.from_numpy(x), (3, 2, 3), (2, 2, 2), (1, 0, 1), (1, 2, 1),
                            ceil, return_indices=True)
    close_to_torch(y, ty, 0)
    np.testing.assert_array_equal(N(ind), tind.numpy())
    for cip, div in [(True, None), (False, None), (True, 7)]:
        close_to_torch(nn.avg_pool3d_forward(T(x), (3, 3, 2), (2, 1, 2), (1, 1, 1), ceil, cip, div),
               F.avg_pool3d(torch.from_numpy(x), (3, 3, 2), (2, 1, 2), (1, 1, 1), ceil, cip, div),
               1e-5)
    x2 = x[:, :, 0]
    y, ind = nn.adaptive_max_pool2d_forward(T(x2), (4, 5))
    ty, tind = F.adaptive_max_pool2d(torch.from_numpy(x2), (4, 5), return_indices=True)
    close_to_torch(y, ty, 0)
    np.testing.assert_array_equal(N(ind), tind.numpy())
    x1 = x[:, :, 0, 0]
    y, ind = nn.max_pool1d_forward(T(x1), 3, 2, 1, 2, ceil)
    ty, tind = F.max_pool1d(torch.from_numpy(x1), 3, 2, 1, 2, ceil, return_indices=True)
    close_to_torch(y, ty, 0)
    np.testing.assert_array_equal(N(ind), tind.numpy())
    close_to_torch(nn.avg_pool1d_forward(T(x1), 3, 2, 1, ceil, False),
           F.avg_pool1d(torch.from_numpy(x1), 3, 2, 1, ceil, False), 1e-6)


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
