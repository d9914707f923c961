"""conv3d, the transposed convolutions, 3-d / adaptive pooling and
max_unpool against loops written out in NumPy (float64); gradcheck and
gradgradcheck; non-contiguous, unbatched and empty inputs; bad input."""
import itertools

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F
from ember.autograd import gradcheck, gradgradcheck
from ember.nn import _kernels

from conftest import requires_torch, torch


@pytest.fixture(autouse=True, params=["installed", "composed"])
def kernels(request, monkeypatch):
    """Every test runs twice: with the installed kernel packages (if any) and
    with the composed forms alone."""
    if request.param == "composed":
        monkeypatch.setattr(_kernels, "_table", dict(_kernels.COMPOSED))
    return request.param


def E(a, grad=False):
    t = ember.from_numpy(np.ascontiguousarray(a))
    return t.requires_grad_() if grad else t


def randn(rng, *shape):
    return rng.standard_normal(shape)


# ---- NumPy references ---------------------------------------------------------------
def np_conv(x, w, b, stride, pads, dilation, groups):
    """Direct cross-correlation; pads is (low, high) per spatial dimension."""
    nd = x.ndim - 2
    x = np.pad(x, [(0, 0), (0, 0)] + list(pads))
    n, c = x.shape[:2]
    o, cg = w.shape[:2]
    ks = w.shape[2:]
    osz = [(x.shape[2 + i] - dilation[i] * (ks[i] - 1) - 1) // stride[i] + 1
           for i in range(nd)]
    out = np.zeros((n, o) + tuple(osz))
    og = o // groups
    for pos in itertools.product(*[range(s) for s in osz]):
        sl = tuple(slice(p * s, p * s + d * (k - 1) + 1, d)
                   for p, s, d, k in zip(pos, stride, dilation, ks))
        for g in range(groups):
            patch = x[(slice(None), slice(g * cg, (g + 1) * cg)) + sl]
            wg = w[g * og:(g + 1) * og]
            out[(slice(None), slice(g * og, (g + 1) * og)) + pos] = np.tensordot(
                patch, wg, axes=(list(range(1, nd + 2)), list(range(1, nd + 2))))
    if b is not None:
        out += b.reshape((1, o) + (1,) * nd)
    return out


def np_conv_transpose(x, w, b, stride, padding, output_padding, groups, dilation):
    """Scatter form: input element i of channel c adds w[c, o, k] at output
    position i·s − p + k·d."""
    nd = x.ndim - 2
    n, c = x.shape[:2]
    og = w.shape[1]
    ks = w.shape[2:]
    cg = c // groups
    osz = [(x.shape[2 + i] - 1) * stride[i] - 2 * padding[i] + dilation[i] * (ks[i] - 1)
           + output_padding[i] + 1 for i in range(nd)]
    out = np.zeros((n, og * groups) + tuple(osz))
    for pos in itertools.product(*[range(s) for s in x.shape[2:]]):
        for k in itertools.product(*[range(s) for s in ks]):
            q = [p * s - pad + kk * d for p, s, pad, kk, d in
                 zip(pos, stride, padding, k, dilation)]
            if any(v < 0 or v >= s for v, s in zip(q, osz)):
                continue
            for g in range(groups):
                xs = x[(slice(None), slice(g * cg, (g + 1) * cg)) + pos]       # n, cg
                ws = w[(slice(g * cg, (g + 1) * cg), slice(None)) + k]        # cg, og
                out[(slice(None), slice(g * og, (g + 1) * og)) + tuple(q)] += xs @ ws
    if b is not None:
        out += b.reshape((1, -1) + (1,) * nd)
    return out


def np_pool_out(size, k, s, p, d, ceil):
    num = size + 2 * p - d * (k - 1) - 1
    out = (-(-num // s) if ceil else num // s) + 1
    if ceil and (out - 1) * s >= size + p:
        out -= 1
    return out


def np_max_pool(x, k, s, p, d, ceil):
    nd = x.ndim - 2
    sizes = x.shape[2:]
    osz = [np_pool_out(*a, ceil) for a in zip(sizes, k, s, p, d)]
    out = np.zeros(x.shape[:2] + tuple(osz))
    idx = np.zeros(out.shape, dtype=np.int64)
    for n, c in itertools.product(range(x.shape[0]), range(x.shape[1])):
        for pos in itertools.product(*[range(o) for o in osz]):
            best, arg = -np.inf, -1
            for kk in itertools.product(*[range(v) for v in k]):
                q = [o * ss - pp + j * dd for o, ss, pp, j, dd in zip(pos, s, p, kk, d)]
                if any(v < 0 or v >= m for v, m in zip(q, sizes)):
                    continue
                v = x[(n, c) + tuple(q)]
                if v > best:
                    best, arg = v, int(np.ravel_multi_index(q, sizes))
            out[(n, c) + pos], idx[(n, c) + pos] = best, arg
    assert nd == len(k)
    return out, idx


def np_avg_pool(x, k, s, p, ceil, count_include_pad, divisor):
    sizes = x.shape[2:]
    osz = [np_pool_out(a, b, c, e, 1, ceil) for a, b, c, e in zip(sizes, k, s, p)]
    out = np.zeros(x.shape[:2] + tuple(osz))
    for pos in itertools.product(*[range(o) for o in osz]):
        starts = [o * ss - pp for o, ss, pp in zip(pos, s, p)]
        ends = [min(st + kk, m + pp) for st, kk, m, pp in zip(starts, k, sizes, p)]
        padded = np.prod([e - st for st, e in zip(starts, ends)])
        lo = [max(st, 0) for st in starts]
        hi = [min(e, m) for e, m in zip(ends, sizes)]
        block = x[(slice(None), slice(None)) + tuple(slice(a, b) for a, b in zip(lo, hi))]
        total = block.sum(axis=tuple(range(2, x.ndim)))
        if divisor:
            div = divisor
        elif count_include_pad:
            div = padded
        else:
            div = np.prod([b - a for a, b in zip(lo, hi)])
        out[(slice(None), slice(None)) + pos] = total / div
    return out


def np_adaptive(x, out, reduce):
    sizes = x.shape[2:]
    res = np.zeros(x.shape[:2] + tuple(out))
    for pos in itertools.product(*[range(o) for o in out]):
        sl = tuple(slice((i * n) // o, -(-((i + 1) * n) // o)) for i, n, o in
                   zip(pos, sizes, out))
        block = x[(slice(None), slice(None)) + sl]
        flat = block.reshape(block.shape[:2] + (-1,))
        res[(slice(None), slice(None)) + pos] = reduce(flat, axis=-1)
    return res


# ---- forward against the references -----------------------------------------------
CONV3D = [  # (x shape, w shape, stride, padding, dilation, groups, bias)
    ((2, 2, 4, 5, 4), (3, 2, 2, 3, 2), (1, 2, 1), (1, 0, 1), (1, 1, 1), 1, True),
    ((1, 4, 5, 4, 4), (2, 2, 2, 2, 2), (1, 1, 2), (0, 1, 0), (2, 1, 1), 2, False),
    ((2, 3, 3, 3, 3), (6, 1, 3, 1, 2), (2, 1, 1), (1, 1, 1), (1, 1, 2), 3, True),
]


@pytest.mark.parametrize("xs,ws,stride,padding,dilation,groups,bias", CONV3D)
def test_conv3d_matches_loops(rng, xs, ws, stride, padding, dilation, groups, bias):
    x, w = randn(rng, *xs), randn(rng, *ws)
    b = randn(rng, ws[0]) if bias else None
    got = F.conv3d(E(x), E(w), None if b is None else E(b), stride, padding, dilation, groups)
    want = np_conv(x, w, b, stride, [(p, p) for p in padding], dilation, groups)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-10, atol=1e-12)


def test_conv3d_same_valid_and_unbatched(rng):
    x, w = randn(rng, 2, 4, 5, 6), randn(rng, 3, 2, 2, 3, 4)
    got = F.conv3d(E(x), E(w), padding="same", dilation=(2, 1, 1))
    # 'same': total d (k − 1), the odd element on the high side
    want = np_conv(x[None], w, None, (1, 1, 1), [(1, 1), (1, 1), (1, 2)], (2, 1, 1), 1)[0]
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-10, atol=1e-12)
    got = F.conv3d(E(x), E(w), padding="valid")
    np.testing.assert_allclose(got.numpy(), np_conv(x[None], w, None, (1, 1, 1),
                                                    [(0, 0)] * 3, (1, 1, 1), 1)[0], rtol=1e-10)


def test_conv3d_non_contiguous_and_empty_batch(rng):
    base = randn(rng, 2, 2, 4, 5, 3)
    x = E(base).transpose(3, 4)                     # (2, 2, 4, 3, 5), strided
    assert not x.is_contiguous()
    w = randn(rng, 2, 2, 2, 2, 2)
    want = np_conv(base.transpose(0, 1, 2, 4, 3), w, None, (1, 1, 1), [(0, 0)] * 3,
                   (1, 1, 1), 1)
    np.testing.assert_allclose(F.conv3d(x, E(w)).numpy(), want, rtol=1e-10, atol=1e-12)
    out = F.conv3d(ember.zeros(0, 2, 3, 3, 3, dtype=ember.float64), E(w))
    assert tuple(out.shape) == (0, 2, 2, 2, 2)


CONVT = [  # (nd, x shape, w shape, stride, padding, output_padding, groups, dilation)
    (2, (2, 3, 4, 5), (3, 2, 3, 3), (1, 1), (0, 0), (0, 0), 1, (1, 1)),
    (2, (2, 2, 4, 3), (2, 4, 3, 2), (2, 3), (1, 0), (1, 2), 1, (1, 1)),
    (2, (1, 4, 3, 3), (4, 3, 2, 2), (2, 2), (1, 1), (0, 1), 2, (3, 2)),
    (1, (2, 3, 5), (3, 2, 4), (3,), (1,), (2,), 1, (1,)),
    (1, (1, 4, 6), (4, 1, 3), (2,), (2,), (0,), 4, (2,)),
    (3, (1, 2, 2, 3, 2), (2, 2, 2, 1, 2), (1, 2, 2), (0, 0, 1), (0, 1, 0), 1, (1, 1, 1)),
]


@pytest.mark.parametrize("nd,xs,ws,stride,padding,output_padding,groups,dilation", CONVT)
def test_conv_transpose_matches_scatter_loops(rng, nd, xs, ws, stride, padding, output_padding,
                                              groups, dilation):
    x, w = randn(rng, *xs), randn(rng, *ws)
    b = randn(rng, ws[1] * groups)
    fn = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}[nd]
    got = fn(E(x), E(w), E(b), stride, padding, output_padding, groups, dilation)
    want = np_conv_transpose(x, w, b, stride, padding, output_padding, groups, dilation)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-10, atol=1e-12)


def test_conv_transpose2d_is_the_gradient_of_conv2d(rng):
    # <conv2d(x, w), y> = <x, conv_transpose2d(y, w)>
    x, w = randn(rng, 2, 3, 7, 6), randn(rng, 4, 3, 3, 2)
    y = randn(rng, 2, 4, 4, 3)
    lhs = (F.conv2d(E(x), E(w), stride=2, padding=(1, 0)).numpy() * y).sum()
    rhs = (F.conv_transpose2d(E(y), E(w), stride=2, padding=(1, 0)).numpy() * x).sum()
    assert abs(lhs - rhs) < 1e-9 * max(1.0, abs(lhs))


def test_conv_transpose_module_output_size(rng):
    m = nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1).double()
    x = E(randn(rng, 1, 2, 4, 5))
    assert tuple(m(x).shape) == (1, 3, 7, 9)
    for size in ((8, 9), (7, 10), [1, 3, 8, 10]):
        out = m(x, output_size=size)
        assert tuple(out.shape[2:]) == tuple(size[-2:])
        op = tuple(s - lo for s, lo in zip(size[-2:], (7, 9)))
        want = np_conv_transpose(x.numpy(), m.weight.detach().numpy(),
                                 m.bias.detach().numpy(), (2, 2), (1, 1), op, 1, (1, 1))
        np.testing.assert_allclose(out.detach().numpy(), want, rtol=1e-10, atol=1e-12)
    with pytest.raises(ValueError, match=r"requested an output size of \[9, 9\], but valid "
                                         r"sizes range from \[7, 9\] to \[8, 10\]"):
        m(x, output_size=(9, 9))
    with pytest.raises(ValueError, match="ConvTranspose2D: for 4D input, output_size must "
                                         r"have 2 or 4 elements \(got 3\)"):
        m(x, output_size=(1, 8, 9))


POOL3D = [  # (shape, kernel, stride, padding, dilation, ceil)
    ((2, 2, 4, 4, 4), (2, 2, 2), (2, 2, 2), (0, 0, 0), (1, 1, 1), False),
    ((1, 2, 5, 5, 6), (3, 2, 2), (2, 1, 2), (1, 0, 1), (1, 2, 1), False),
    ((1, 3, 5, 6, 5), (2, 3, 2), (2, 2, 2), (1, 1, 0), (1, 1, 1), True),
]


@pytest.mark.parametrize("shape,k,s,p,d,ceil", POOL3D)
def test_max_pool3d_matches_loops(rng, shape, k, s, p, d, ceil):
    x = randn(rng, *shape)
    out, idx = F.max_pool3d(E(x), k, s, p, d, ceil, return_indices=True)
    want, want_idx = np_max_pool(x, k, s, p, d, ceil)
    np.testing.assert_array_equal(out.numpy(), want)
    np.testing.assert_array_equal(idx.numpy(), want_idx)
    assert idx.dtype == ember.int64
    np.testing.assert_array_equal(nn.MaxPool3d(k, s, p, d, ceil_mode=ceil)(E(x)).numpy(), want)


def test_max_pool3d_gradient_goes_to_the_first_maximum():
    x = E(np.ones((1, 1, 2, 2, 2)), grad=True)
    F.max_pool3d(x, 2).sum().backward()
    want = np.zeros((1, 1, 2, 2, 2))
    want[0, 0, 0, 0, 0] = 1
    np.testing.assert_array_equal(x.grad.numpy(), want)


@pytest.mark.parametrize("shape,k,s,p,ceil,cip,div", [
    ((2, 2, 4, 4, 4), (2, 2, 2), (2, 2, 2), (0, 0, 0), False, True, None),
    ((1, 2, 5, 4, 5), (3, 3, 3), (2, 2, 2), (1, 1, 1), False, False, None),
    ((1, 2, 5, 4, 5), (3, 3, 3), (2, 2, 2), (1, 1, 1), True, True, None),
    ((1, 2, 5, 5, 3), (2, 3, 2), (2, 3, 2), (0, 1, 1), True, False, 5),
])
def test_avg_pool3d_matches_loops(rng, shape, k, s, p, ceil, cip, div):
    x = randn(rng, *shape)
    got = F.avg_pool3d(E(x), k, s, p, ceil, cip, div)
    np.testing.assert_allclose(got.numpy(), np_avg_pool(x, k, s, p, ceil, cip, div),
                               rtol=1e-12, atol=1e-14)


def test_pool3d_unbatched_and_non_contiguous(rng):
    base = randn(rng, 2, 5, 4, 6)
    x = E(base).permute(0, 3, 2, 1)                 # (2, 6, 4, 5), unbatched, strided
    got = F.max_pool3d(x, 2, ceil_mode=True)
    want, _ = np_max_pool(base.transpose(0, 3, 2, 1)[None], (2, 2, 2), (2, 2, 2), (0, 0, 0),
                          (1, 1, 1), True)
    np.testing.assert_array_equal(got.numpy(), want[0])
    got = F.avg_pool3d(x, 3, 1, 1, count_include_pad=False)
    np.testing.assert_allclose(got.numpy(), np_avg_pool(base.transpose(0, 3, 2, 1)[None],
                                                        (3,) * 3, (1,) * 3, (1,) * 3, False,
                                                        False, None)[0], rtol=1e-12)


@pytest.mark.parametrize("shape,out", [((2, 3, 7), (3,)), ((1, 2, 9), (9,)), ((2, 2, 5), (8,))])
def test_adaptive_1d_match_loops(rng, shape, out):
    x = randn(rng, *shape)
    np.testing.assert_allclose(F.adaptive_avg_pool1d(E(x), out[0]).numpy(),
                               np_adaptive(x, out, np.mean), rtol=1e-12)
    got, idx = F.adaptive_max_pool1d(E(x), out[0], return_indices=True)
    np.testing.assert_array_equal(got.numpy(), np_adaptive(x, out, np.max))
    np.testing.assert_array_equal(np.take_along_axis(x, idx.numpy(), -1), got.numpy())


@pytest.mark.parametrize("shape,out", [((2, 2, 5, 3, 7), (2, 3, 3)), ((1, 2, 4, 4, 4), (2, 2, 2)),
                                       ((2, 3, 4, 2), (5, 1, 2))])
def test_adaptive_avg_pool3d_matches_loops(rng, shape, out):
    x = randn(rng, *shape)
    batched = x if x.ndim == 5 else x[None]
    want = np_adaptive(batched, out, np.mean)
    want = want if x.ndim == 5 else want[0]
    np.testing.assert_allclose(F.adaptive_avg_pool3d(E(x), out).numpy(), want, rtol=1e-12)
    assert tuple(F.adaptive_avg_pool3d(E(x), (None, 1, None)).shape[-3:]) == \
        (x.shape[-3], 1, x.shape[-1])


@pytest.mark.parametrize("shape,out", [((2, 3, 7, 5), (3, 2)), ((1, 2, 6, 4), (3, 2)),
                                       ((2, 5, 3), (4, 1))])
def test_adaptive_max_pool2d_indices(rng, shape, out):
    x = randn(rng, *shape)
    got, idx = F.adaptive_max_pool2d(E(x), out, return_indices=True)
    batched = x if x.ndim == 4 else x[None]
    want = np_adaptive(batched, out, np.max)
    np.testing.assert_array_equal(got.numpy(), want if x.ndim == 4 else want[0])
    flat = x.reshape(x.shape[:-2] + (-1,))
    picked = np.take_along_axis(flat, idx.numpy().reshape(idx.shape[:-2] + (-1,)), -1)
    np.testing.assert_array_equal(picked.reshape(got.shape), got.numpy())


@pytest.mark.parametrize("shape,out", [((2, 2, 5, 3, 7), (2, 3, 3)), ((1, 2, 4, 4, 6), (2, 2, 3)),
                                       ((2, 3, 4, 2), (3, 1, 2))])
def test_adaptive_max_pool3d_indices(rng, shape, out):
    x = rng.standard_normal(shape)
    got, idx = F.adaptive_max_pool3d(E(x), out, return_indices=True)
    batched = x if x.ndim == 5 else x[None]
    want = np_adaptive(batched, out, np.max)
    np.testing.assert_array_equal(got.numpy(), want if x.ndim == 5 else want[0])
    flat = x.reshape(x.shape[:-3] + (-1,))
    picked = np.take_along_axis(flat, idx.numpy().reshape(idx.shape[:-3] + (-1,)), -1)
    np.testing.assert_array_equal(picked.reshape(got.shape), got.numpy())
    np.testing.assert_array_equal(nn.AdaptiveMaxPool3d(out)(E(x)).numpy(), got.numpy())


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_max_unpool_inverts_max_pool(rng, nd):
    shape = (2, 3) + (4, 6, 4)[:nd]
    x = randn(rng, *shape)
    pool = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}[nd]
    unpool = {1: F.max_unpool1d, 2: F.max_unpool2d, 3: F.max_unpool3d}[nd]
    out, idx = pool(E(x), 2, return_indices=True)
    back = unpool(out, idx, 2).numpy()
    want = np.zeros(x.reshape(2, 3, -1).shape)
    np.put_along_axis(want, idx.numpy().reshape(2, 3, -1), out.numpy().reshape(2, 3, -1), -1)
    np.testing.assert_array_equal(back, want.reshape(shape))
    # a larger output_size keeps the positions, indexed in the larger plane
    bigger = tuple(s + 1 for s in shape[2:])
    assert tuple(unpool(out, idx, 2, output_size=bigger).shape) == shape[:2] + bigger
    m = {1: nn.MaxUnpool1d, 2: nn.MaxUnpool2d, 3: nn.MaxUnpool3d}[nd](2)
    np.testing.assert_array_equal(m(out, idx).numpy(), back)


def test_max_unpool_errors(rng):
    out, idx = F.max_pool2d(E(randn(rng, 1, 1, 4, 4)), 2, return_indices=True)
    bad = idx.clone()
    bad[0, 0, 1, 1] = 30
    with pytest.raises(RuntimeError, match=r"Found an invalid max index: 30 \(output volumes "
                                           r"are of size 4x4\)"):
        F.max_unpool2d(out, bad, 2)
    with pytest.raises(ValueError, match=r'invalid output_size "\(9, 9\)" \(dim 0 must be '
                                         r"between 2 and 6\)"):
        F.max_unpool2d(out, idx, 2, output_size=(9, 9))


# ---- derivatives -------------------------------------------------------------------
def G(rng, *shape, scale=1.0):
    return E(rng.standard_normal(shape) * scale, grad=True)


GRAD_CASES = [
    ("conv3d", lambda x, w, b: F.conv3d(x, w, b, (1, 2, 1), (1, 0, 1), (2, 1, 1)),
     lambda r: (G(r, 1, 2, 4, 4, 3), G(r, 2, 2, 2, 2, 2), G(r, 2))),
    ("conv3d_groups_same", lambda x, w: F.conv3d(x, w, padding="same", groups=2),
     lambda r: (G(r, 1, 4, 3, 2, 3), G(r, 2, 2, 2, 1, 2))),
    ("conv_transpose2d", lambda x, w, b: F.conv_transpose2d(x, w, b, 2, 1, (1, 0), 1, (1, 2)),
     lambda r: (G(r, 1, 2, 3, 3), G(r, 2, 2, 3, 2), G(r, 2))),
    ("conv_transpose2d_groups", lambda x, w: F.conv_transpose2d(x, w, groups=2, stride=(1, 2)),
     lambda r: (G(r, 2, 4, 2, 3), G(r, 4, 1, 2, 2))),
    ("conv_transpose1d", lambda x, w: F.conv_transpose1d(x, w, stride=3, output_padding=1),
     lambda r: (G(r, 2, 2, 3), G(r, 2, 2, 3))),
    ("conv_transpose3d", lambda x, w: F.conv_transpose3d(x, w, stride=2, padding=1),
     lambda r: (G(r, 1, 2, 2, 2, 2), G(r, 2, 1, 2, 3, 2))),
    ("max_pool3d", lambda x: F.max_pool3d(x, 2, 1, 1, ceil_mode=True),
     lambda r: (G(r, 1, 2, 3, 3, 2),)),
    ("avg_pool3d", lambda x: F.avg_pool3d(x, 3, 2, 1, count_include_pad=False),
     lambda r: (G(r, 1, 2, 4, 3, 4),)),
    ("avg_pool3d_divisor", lambda x: F.avg_pool3d(x, 2, ceil_mode=True, divisor_override=3),
     lambda r: (G(r, 1, 1, 3, 3, 3),)),
    ("adaptive_avg_pool1d", lambda x: F.adaptive_avg_pool1d(x, 3), lambda r: (G(r, 2, 2, 7),)),
    ("adaptive_avg_pool3d", lambda x: F.adaptive_avg_pool3d(x, (2, 3, 1)),
     lambda r: (G(r, 1, 2, 3, 4, 3),)),
    ("adaptive_max_pool1d", lambda x: F.adaptive_max_pool1d(x, 3), lambda r: (G(r, 2, 2, 7),)),
    ("adaptive_max_pool2d_uneven", lambda x: F.adaptive_max_pool2d(x, (2, 3)),
     lambda r: (G(r, 1, 2, 5, 4),)),
    ("adaptive_max_pool3d", lambda x: F.adaptive_max_pool3d(x, (2, 1, 3)),
     lambda r: (G(r, 1, 2, 3, 2, 4),)),
    ("max_unpool2d", lambda x: F.max_unpool2d(x, UNPOOL_IDX, 2),
     lambda r: (G(r, 1, 1, 2, 2),)),
]
UNPOOL_IDX = ember.tensor([[[[1, 6], [8, 15]]]])
SECOND_ORDER = {"conv3d", "conv_transpose2d", "conv_transpose1d", "max_pool3d", "avg_pool3d",
                "adaptive_avg_pool3d", "adaptive_max_pool2d_uneven"}


@pytest.mark.parametrize("name,fn,make", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_gradcheck(name, fn, make):
    assert gradcheck(fn, make(np.random.default_rng(7)), eps=1e-6, atol=1e-5)


@pytest.mark.parametrize("name,fn,make", [c for c in GRAD_CASES if c[0] in SECOND_ORDER],
                         ids=[c[0] for c in GRAD_CASES if c[0] in SECOND_ORDER])
def test_gradgradcheck(name, fn, make):
    assert gradgradcheck(fn, make(np.random.default_rng(8)), eps=1e-6, atol=1e-4)


# ---- kernel dispatch ----------------------------------------------------------------
KERNEL_CALLS = [
    ("conv3d", lambda: F.conv3d(ember.randn(1, 2, 3, 3, 3), ember.randn(1, 2, 2, 2, 2))),
    ("conv_transpose2d", lambda: F.conv_transpose2d(ember.randn(1, 2, 3, 3),
                                                    ember.randn(2, 1, 2, 2))),
    ("max_pool3d", lambda: F.max_pool3d(ember.randn(1, 1, 2, 2, 2), 2)),
    ("avg_pool3d", lambda: F.avg_pool3d(ember.randn(1, 1, 2, 2, 2), 2)),
    ("adaptive_max_pool2d", lambda: F.adaptive_max_pool2d(ember.randn(1, 1, 5, 5), 2)),
    ("upsample_nearest2d", lambda: F.interpolate(ember.randn(1, 1, 2, 2), scale_factor=2)),
    ("upsample_bilinear2d", lambda: F.interpolate(ember.randn(1, 1, 2, 2), size=3,
                                                  mode="bilinear")),
    ("reflection_pad", lambda: F.pad(ember.randn(1, 1, 3), (1, 1), mode="reflect")),
    ("replication_pad", lambda: F.pad(ember.randn(1, 1, 3, 3), (1, 1, 2, 0),
                                      mode="replicate")),
    ("embedding_bag", lambda: F.embedding_bag(ember.tensor([[0, 1]]), ember.randn(3, 2))),
]


@pytest.mark.parametrize("name,call", KERNEL_CALLS, ids=[c[0] for c in KERNEL_CALLS])
def test_functional_goes_through_the_kernel_table(monkeypatch, name, call):
    calls = []
    table = dict(_kernels.COMPOSED)
    real = table[name]

    def recording(*args):
        calls.append(args)
        return real(*args)
    table[name] = recording
    monkeypatch.setattr(_kernels, "_table", table)
    call()
    assert len(calls) == 1


# ---- bad input ----------------------------------------------------------------------
ERRORS = [
    ("conv3d-rank", lambda nn, F, L: nn.Conv3d(3, 4, 2)(L.ones(2, 3)), RuntimeError,
     "Expected 4D (unbatched) or 5D (batched) input to conv3d, but got input of size: [2, 3]"),
    ("conv3d-channels", lambda nn, F, L: nn.Conv3d(4, 2, 1)(L.ones(2, 3, 4, 4, 4)), RuntimeError,
     "Given groups=1, weight of size [2, 4, 1, 1, 1], expected input[2, 3, 4, 4, 4] to have 4 "
     "channels, but got 3 channels instead"),
    ("conv3d-too-small", lambda nn, F, L: nn.Conv3d(3, 2, 3)(L.ones(2, 3, 2, 2, 2)), RuntimeError,
     "Calculated padded input size per channel: (2 x 2 x 2). Kernel size: (3 x 3 x 3). "
     "Kernel size can't be greater than actual input size"),
    ("conv3d-padding-mode", lambda nn, F, L: nn.Conv3d(3, 2, 3, padding_mode="mirror"),
     ValueError, "padding_mode must be one of"),
    ("conv3d-same-strided", lambda nn, F, L: nn.Conv3d(3, 2, 3, stride=2, padding="same"),
     ValueError, "padding='same' is not supported for strided convolutions"),
    ("convT-channels", lambda nn, F, L: nn.ConvTranspose2d(4, 3, 3)(L.ones(2, 5, 4, 4)),
     RuntimeError, "Given transposed=1, weight of size [4, 3, 3, 3], expected input[2, 5, 4, 4]"
                   " to have 4 channels, but got 5 channels instead"),
    ("convT-rank", lambda nn, F, L: nn.ConvTranspose2d(4, 3, 3)(L.ones(2, 4, 4, 4, 4)),
     RuntimeError, "Expected 3D (unbatched) or 4D (batched) input to conv_transpose2d, but "
                   "got input of size: [2, 4, 4, 4, 4]"),
    ("convT-output-padding", lambda nn, F, L: F.conv_transpose2d(
        L.ones(2, 4, 4, 4), L.ones(4, 3, 3, 3), stride=2, output_padding=2), RuntimeError,
     "output padding must be smaller than either stride or dilation, but got "
     "output_padding_height: 2 output_padding_width: 2 stride_height: 2 stride_width: 2 "
     "dilation_height: 1 dilation_width: 1"),
    ("convT-too-small", lambda nn, F, L: F.conv_transpose2d(
        L.ones(1, 4, 1, 1), L.ones(4, 3, 1, 1), padding=2),
     RuntimeError, "Output size is too small"),
    ("convT-padding-mode", lambda nn, F, L: nn.ConvTranspose2d(4, 3, 3, padding_mode="reflect"),
     ValueError, 'Only "zeros" padding mode is supported for ConvTranspose2d'),
    ("max_pool3d-rank", lambda nn, F, L: F.max_pool3d(L.ones(3, 4, 4), 2), RuntimeError,
     "non-empty 4D or 5D (batch mode) tensor expected for input"),
    ("max_pool3d-pad", lambda nn, F, L: F.max_pool3d(L.ones(2, 3, 4, 4, 4), 2, padding=2),
     RuntimeError, "pad should be at most half of effective kernel size, but got pad=2, "
                   "kernel_size=2 and dilation=1"),
    ("max_pool3d-too-small", lambda nn, F, L: F.max_pool3d(L.ones(2, 3, 1, 4, 4), 2), RuntimeError,
     "Given input size: (3x1x4x4). Calculated output size: (3x0x2x2). Output size is too "
     "small"),
    ("max_pool3d-kernel-tuple", lambda nn, F, L: F.max_pool3d(L.ones(1, 2, 3, 3, 3), (2, 2)),
     RuntimeError, "max_pool3d: kernel_size must either be a single int, or a tuple of three "
                   "ints"),
    ("max_pool3d-stride-zero", lambda nn, F, L: F.max_pool3d(L.ones(1, 2, 3, 3, 3), 2, 0),
     RuntimeError, "stride should not be zero"),
    ("conv3d-dtype", lambda nn, F, L: F.conv3d(L.ones(1, 2, 3, 3, 3),
                                               L.ones(1, 2, 2, 2, 2, dtype=L.float64)),
     RuntimeError, "expected scalar type Float but found Double"),
    ("avg_pool3d-too-small", lambda nn, F, L: F.avg_pool3d(L.ones(2, 3, 1, 4, 4), 2), RuntimeError,
     "input image (T: 1 H: 4 W: 4) smaller than kernel size (kT: 2 kH: 2 kW: 2)"),
    ("avg_pool3d-rank", lambda nn, F, L: F.avg_pool3d(L.ones(3, 4, 4), 2), RuntimeError,
     "non-empty 4D or 5D (batch mode) tensor expected for input"),
    ("adaptive_avg_pool1d-rank", lambda nn, F, L: F.adaptive_avg_pool1d(L.ones(2, 3, 4, 4), 2),
     RuntimeError, "Expected 2 to 3 dimensions, but got 4-dimensional tensor for argument #1 "
                   "'self' (while checking arguments for adaptive_avg_pool1d)"),
    ("adaptive_avg_pool3d-rank", lambda nn, F, L: F.adaptive_avg_pool3d(L.ones(3, 4, 4), 2),
     RuntimeError, "adaptive_avg_pool3d(): Expected 4D or 5D tensor, but got [3, 4, 4]"),
    ("adaptive_max_pool2d-empty", lambda nn, F, L: F.adaptive_max_pool2d(L.ones(3, 4, 0), 2),
     RuntimeError, "adaptive_max_pool2d(): Expected input to have non-zero size for non-batch "
                   "dimensions, but input has sizes [3, 4, 0] with dimension 2 being empty"),
    ("instancenorm1d-rank", lambda nn, F, L: nn.InstanceNorm1d(3)(L.ones(2, 3, 4, 5)), ValueError,
     "expected 2D or 3D input (got 4D input)"),
    ("instancenorm3d-rank", lambda nn, F, L: nn.InstanceNorm3d(3)(L.ones(2, 3, 4)), ValueError,
     "expected 4D or 5D input (got 3D input)"),
    ("instancenorm1d-channels",
     lambda nn, F, L: nn.InstanceNorm1d(3, affine=True)(L.ones(2, 4, 5)), ValueError,
     "expected input's size at dim=1 to match num_features (3), but got: 4."),
    ("dropout1d-rank", lambda nn, F, L: F.dropout1d(L.ones(2, 3, 4, 5)), RuntimeError,
     "dropout1d: Expected 2D or 3D input, but received a 4D input."),
]


@pytest.mark.parametrize("name,call,exc,message", ERRORS, ids=[e[0] for e in ERRORS])
def test_bad_input(name, call, exc, message):
    with pytest.raises(exc) as info:
        call(nn, F, ember)
    assert message in str(info.value)


TORCH_WORDING = [e for e in ERRORS if "padding-mode" not in e[0] and "empty" not in e[0]]


@requires_torch
@pytest.mark.torch
@pytest.mark.parametrize("name,call,exc,message", TORCH_WORDING,
                         ids=[e[0] for e in TORCH_WORDING])
def test_torch_says_the_same(name, call, exc, message):
    with pytest.raises(exc) as info:
        call(torch.nn, torch.nn.functional, torch)
    assert message in str(info.value)


def test_failed_call_leaves_input_and_weights_intact(rng):
    m = nn.Conv3d(3, 2, 3).double()
    before = m.weight.detach().numpy().copy()
    x = E(randn(rng, 1, 3, 2, 2, 2))
    saved = x.numpy().copy()
    with pytest.raises(RuntimeError):
        m(x)
    np.testing.assert_array_equal(m.weight.detach().numpy(), before)
    np.testing.assert_array_equal(x.numpy(), saved)


# ---- channel dropout, instance norm -----------------------------------------------------
@pytest.mark.parametrize("fn,shape,spatial", [(F.dropout1d, (4, 6, 5), 1),
                                              (F.dropout3d, (3, 5, 2, 3, 2), 3),
                                              (F.dropout1d, (6, 5), 1)])
def test_channel_dropout_zeroes_whole_channels(fn, shape, spatial):
    ember.manual_seed(3)
    x = ember.from_numpy(np.random.default_rng(0).uniform(1, 2, shape))
    out = fn(x, 0.5).numpy()
    lead = out.reshape(out.shape[:-spatial] + (-1,))
    kept = np.abs(lead).min(-1) > 0
    dropped = np.abs(lead).max(-1) == 0
    assert np.all(kept | dropped) and kept.any() and dropped.any()
    np.testing.assert_allclose(lead[kept], 2 * x.numpy().reshape(lead.shape)[kept])
    assert fn(x, 0.5, training=False) is x


@pytest.mark.parametrize("cls,shape", [(nn.InstanceNorm1d, (2, 3, 7)),
                                       (nn.InstanceNorm3d, (2, 3, 2, 3, 4)),
                                       (nn.InstanceNorm1d, (3, 5))])
def test_instance_norm_matches_numpy(rng, cls, shape):
    x = randn(rng, *shape)
    out = cls(3).double()(E(x)).numpy()
    batched_rank = 3 if cls is nn.InstanceNorm1d else 5
    batched = x if x.ndim == batched_rank else x[None]
    axes = tuple(range(2, batched.ndim))
    want = (batched - batched.mean(axes, keepdims=True)) / np.sqrt(
        batched.var(axes, keepdims=True) + 1e-5)
    np.testing.assert_allclose(out, want.reshape(out.shape), rtol=1e-10, atol=1e-12)


def test_instance_norm_gradcheck():
    rng = np.random.default_rng(5)
    x = G(rng, 2, 3, 2, 2, 3)
    assert gradcheck(lambda t: F.instance_norm(t), (x,), eps=1e-6, atol=1e-5)
    x = G(rng, 2, 3, 5)
    assert gradcheck(lambda t: F.instance_norm(t), (x,), eps=1e-6, atol=1e-5)
