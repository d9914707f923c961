"""group_norm, upsampling, reflection/replication padding, embedding_bag and
the kl_div / margin_ranking / cosine_embedding losses: forwards against
NumPy float64 references, float64 finite-difference checks of every
backward, strided inputs, bad-input errors (and data left intact), and
PyTorch where it is installed."""
import numpy as np
import pytest

import ember.th as th
import ember.thnn as nn
from test_kernels import N, T, fd_check

TOL = {np.float32: 2e-5, np.float64: 1e-12}


def strided(a):
    """a as a non-contiguous ember.th tensor (a transposed copy, transposed back)."""
    t = T(np.ascontiguousarray(np.swapaxes(a, 0, -1)))
    return t.transpose(0, a.ndim - 1) if a.ndim > 1 else t


def torch_or_skip():
    return pytest.importorskip("torch")


# ---- group norm --------------------------------------------------------------
def group_norm_ref(x, g, w, b, eps):
    n, c = x.shape[:2]
    xg = x.reshape(n, g, -1)
    mean = xg.mean(-1, keepdims=True)
    var = xg.var(-1, keepdims=True)
    y = ((xg - mean) / np.sqrt(var + eps)).reshape(x.shape)
    shape = (1, c) + (1,) * (x.ndim - 2)
    if w is not None:
        y = y * w.reshape(shape)
    if b is not None:
        y = y + b.reshape(shape)
    return y, mean.reshape(n, g), 1 / np.sqrt(var.reshape(n, g) + eps)


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


# ---- upsampling ----------------------------------------------------------------
def nearest_index(o, i, scale):
    if o == i:
        return np.arange(o)
    if o == 2 * i:
        return np.arange(o) // 2
    s = np.float32(1.0 / scale) if scale else np.float32(i) / np.float32(o)
    return np.minimum(np.floor(np.arange(o, dtype=np.float32) * s).astype(np.int64), i - 1)


def linear_weights(o, i, align, scale):
    """(o, i) interpolation matrix along one dim, PyTorch's coordinates (a dim
    that keeps its size is copied, whatever the scale)."""
    if o == i:
        return np.eye(o)
    if align:
        r = (i - 1) / (o - 1) if o > 1 else 0.0
        src = r * np.arange(o)
    else:
        r = 1.0 / scale if scale else i / o
        src = np.maximum(r * (np.arange(o) + 0.5) - 0.5, 0)
    i0 = np.minimum(src.astype(np.int64), i - 1)
    i1 = np.minimum(i0 + 1, i - 1)
    l1 = np.clip(src - i0, 0, 1)
    m = np.zeros((o, i))
    m[np.arange(o), i0] += 1 - l1
    m[np.arange(o), i1] += l1
    return m


UP_CASES = [((2, 3, 4, 5), (8, 10), None), ((1, 2, 5, 3), (3, 7), None),
            ((2, 1, 3, 4), (7, 9), (2.5, 2.3)), ((3, 4, 4), (4, 4), None),
            ((1, 1, 1, 1), (3, 2), None), ((1, 2, 6, 6), (4, 3), (0.7, 0.5)),
            ((2, 2, 3, 5), (3, 10), (1.3, 2.0))]


@pytest.mark.parametrize("shape,size,scales", UP_CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_upsample_nearest2d(shape, size, scales, dtype):
    x = np.random.default_rng(23).standard_normal(shape).astype(dtype)
    y = N(nn.upsample_nearest2d_forward(strided(x), size, scales))
    sh, sw = scales or (None, None)
    ih, iw = nearest_index(size[0], shape[-2], sh), nearest_index(size[1], shape[-1], sw)
    np.testing.assert_array_equal(y, x[..., ih, :][..., iw])
    x = x.astype(np.float64)
    fd_check(lambda x: N(nn.upsample_nearest2d_forward(T(x), size, scales)), [x],
             lambda gy: [N(nn.upsample_nearest2d_backward_input(T(gy), x.shape, scales))])


@pytest.mark.parametrize("shape,size,scales", UP_CASES)
@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_upsample_bilinear2d(shape, size, scales, align, dtype):
    x = np.random.default_rng(24).standard_normal(shape).astype(dtype)
    y = N(nn.upsample_bilinear2d_forward(strided(x), size, align, scales))
    sh, sw = (None, None) if scales is None or align else scales
    mh = linear_weights(size[0], shape[-2], align, sh)
    mw = linear_weights(size[1], shape[-1], align, sw)
    ref = np.einsum("oh,...hw,pw->...op", mh, x.astype(np.float64), mw)
    np.testing.assert_allclose(y, ref, rtol=TOL[dtype] * 10, atol=TOL[dtype] * 10)
    x = x.astype(np.float64)
    sc = None if align else scales
    fd_check(lambda x: N(nn.upsample_bilinear2d_forward(T(x), size, align, sc)), [x],
             lambda gy: [N(nn.upsample_bilinear2d_backward_input(strided(gy), x.shape, align,
                                                                 sc))])


def test_upsample_bad_input():
    with pytest.raises(RuntimeError, match=r"Expected 3D or 4D .* but got: \[2, 3\]"):
        nn.upsample_nearest2d_forward(th.randn(2, 3), (4, 4))
    with pytest.raises(RuntimeError, match=r"greater than 0, but got input \(H: 0, W: 3\)"):
        nn.upsample_bilinear2d_forward(th.empty(1, 1, 0, 3), (2, 2))
    with pytest.raises(RuntimeError, match=r"output \(H: 0, W: 2\)"):
        nn.upsample_nearest2d_forward(th.randn(1, 1, 2, 3), (0, 2))
    with pytest.raises(TypeError, match="Float or Double"):
        nn.upsample_nearest2d_forward(th.empty(1, 1, 2, 2, dtype=th.int64), (4, 4))
    with pytest.raises(RuntimeError, match=r"grad_output \[1, 2, 4, 4\]"):
        nn.upsample_nearest2d_backward_input(th.randn(1, 2, 4, 4), (1, 1, 2, 2))
    with pytest.raises(ValueError, match="output_size"):
        nn.upsample_nearest2d_forward(th.randn(1, 1, 2, 2), (1, 2, 3))
    # an empty batch is fine
    assert tuple(nn.upsample_nearest2d_forward(th.empty(0, 2, 3, 3), (6, 6)).shape) == (0, 2, 6, 6)


# ---- padding ---------------------------------------------------------------------
PAD_CASES = [  # name, k, numpy mode, input shape, padding (last dim first)
    ("reflection_pad1d", 1, "reflect", (2, 3, 6), (2, 3)),
    ("reflection_pad1d", 1, "reflect", (3, 4), (3, 0)),
    ("reflection_pad2d", 2, "reflect", (2, 2, 4, 5), (1, 2, 3, 1)),
    ("reflection_pad2d", 2, "reflect", (2, 3, 3), (2, 2, 0, 2)),
    ("reflection_pad3d", 3, "reflect", (2, 1, 3, 4, 5), (2, 1, 0, 3, 1, 2)),
    ("reflection_pad3d", 3, "reflect", (2, 3, 2, 4), (1, 1, 1, 1, 1, 1)),
    ("replication_pad1d", 1, "edge", (2, 3, 4), (5, 1)),
    ("replication_pad2d", 2, "edge", (1, 2, 3, 2), (3, 0, 2, 4)),
    ("replication_pad3d", 3, "edge", (2, 1, 2, 3, 2), (1, 2, 0, 1, 2, 1)),
    ("replication_pad3d", 3, "edge", (2, 3, 2, 2), (1, 1, 1, 1, 1, 1)),
]


def pad_ref(x, k, mode, padding):
    pads = [(0, 0)] * (x.ndim - k) + [(padding[2 * j], padding[2 * j + 1])
                                      for j in reversed(range(k))]
    return np.pad(x, pads, mode=mode)


@pytest.mark.parametrize("name,k,mode,shape,padding", PAD_CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_padding(name, k, mode, shape, padding, dtype):
    fwd, bwd = getattr(nn, name + "_forward"), getattr(nn, name + "_backward_input")
    x = np.random.default_rng(25).standard_normal(shape).astype(dtype)
    np.testing.assert_array_equal(N(fwd(strided(x), padding)), pad_ref(x, k, mode, padding))
    x = x.astype(np.float64)
    fd_check(lambda x: N(fwd(T(x), padding)), [x],
             lambda gy: [N(bwd(strided(gy), x.shape, padding))])


@pytest.mark.parametrize("name", ["reflection_pad2d", "replication_pad2d"])
def test_padding_negative_crops(name):
    x = np.random.default_rng(26).standard_normal((2, 5, 6))
    y = N(getattr(nn, name + "_forward")(T(x), (-1, 2, 1, -2)))
    mode = "reflect" if name.startswith("reflection") else "edge"
    np.testing.assert_array_equal(y, np.pad(x, ((0, 0), (1, 0), (0, 2)), mode=mode)[:, :-2, 1:])
    fd_check(lambda x: N(getattr(nn, name + "_forward")(T(x), (-1, 2, 1, -2))), [x],
             lambda gy: [N(getattr(nn, name + "_backward_input")(T(gy), x.shape,
                                                                  (-1, 2, 1, -2)))])


def test_padding_bad_input():
    x = th.randn(1, 3, 4)
    with pytest.raises(RuntimeError, match=r"Padding size should be less than the corresponding "
                                           r"input dimension, but got: padding \(4, 1\) at "
                                           r"dimension 2 of input \[1, 3, 4\]"):
        nn.reflection_pad1d_forward(x, (4, 1))
    with pytest.raises(RuntimeError, match=r"padding \(1, 3\) at dimension 1 of input \[1, 3, 4\]"):
        nn.reflection_pad2d_forward(x, (0, 0, 1, 3))
    with pytest.raises(RuntimeError, match=r"Expected 4D or 5D .* but got: \[1, 3, 4\]"):
        nn.replication_pad3d_forward(x, 1)
    with pytest.raises(RuntimeError, match=r"padding \(2, 0\) at dimension 1 of input "
                                           r"\[1, 2, 3, 4\]"):
        nn.reflection_pad3d_forward(th.randn(1, 2, 3, 4), (0, 0, 0, 0, 2, 0))
    with pytest.raises(RuntimeError, match=r"non-zero dimensions for input, but got: \[1, 0, 4\]"):
        nn.replication_pad1d_forward(th.empty(1, 0, 4), 1)
    with pytest.raises(RuntimeError, match="too small"):
        nn.replication_pad1d_forward(x, (-2, -2))
    with pytest.raises(ValueError, match="padding must be an int or 4 ints"):
        nn.reflection_pad2d_forward(x, (1, 1))
    with pytest.raises(RuntimeError, match=r"grad_output of shape \[1, 3, 6\]"):
        nn.reflection_pad1d_backward_input(th.randn(1, 3, 7), (1, 3, 4), (1, 1))
    before = N(x).copy()
    with pytest.raises(RuntimeError):
        nn.reflection_pad1d_forward(x, (9, 9))
    np.testing.assert_array_equal(N(x), before)
    # a batch of 0 is fine
    assert tuple(nn.replication_pad2d_forward(th.empty(0, 2, 3, 3), 1).shape) == (0, 2, 5, 5)


# ---- embedding_bag -----------------------------------------------------------------
def bag_ranges(n, offsets, include_last):
    """(start, end) of each bag; the last one runs to n (PyTorch reads no end
    from the extra offset of include_last_offset)."""
    starts = offsets[:-1] if include_last else offsets
    return list(zip(starts, list(starts[1:]) + [n]))


def embedding_bag_ref(w, idx, offsets, mode, psw, include_last, pad):
    rows = []
    for s, e in bag_ranges(len(idx), offsets, include_last):
        sel = [i for i in range(s, e) if idx[i] != pad]
        if not sel:
            rows.append(np.zeros(w.shape[1]))
        elif mode == "sum":
            rows.append(sum(w[idx[i]] * (psw[i] if psw is not None else 1.0) for i in sel))
        elif mode == "mean":
            rows.append(np.mean([w[idx[i]] for i in sel], axis=0))
        else:
            rows.append(np.max([w[idx[i]] for i in sel], axis=0))
    return np.array(rows).reshape(-1, w.shape[1])


BAG_CASES = [  # indices, offsets, include_last_offset, padding_idx
    ([1, 2, 4, 4, 3, 0, 6, 2], [0, 2, 2, 5], False, None),
    ([1, 2, 4, 4, 3, 0, 6, 2], [0, 3, 8], True, 4),
    ([5, 5, 0, 1], [0, 1, 1, 4], False, -2),
    ([3, 1, 2], [0, 0, 2], True, None),       # the last bag still runs to the end
]


@pytest.mark.parametrize("case", BAG_CASES)
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_embedding_bag(case, mode, dtype):
    idx, offs, last, pad = case
    rng = np.random.default_rng(27)
    w = rng.standard_normal((7, 5)).astype(dtype)
    psw = rng.standard_normal(len(idx)).astype(dtype) if mode == "sum" else None
    it, ot = T(np.array(idx, dtype=np.int64)), T(np.array(offs, dtype=np.int64))
    out, o2b, bsz, mi = nn.embedding_bag_forward(strided(w), it, ot, mode,
                                                 None if psw is None else T(psw), last, pad)
    padrow = None if pad is None else pad % 7
    ref = embedding_bag_ref(w.astype(np.float64), idx, offs, mode, psw, last, padrow)
    np.testing.assert_allclose(N(out), ref, rtol=TOL[dtype] * 10, atol=TOL[dtype] * 10)
    ranges = bag_ranges(len(idx), offs, last)
    np.testing.assert_array_equal(N(bsz), [sum(idx[i] != padrow for i in range(s, e))
                                           for s, e in ranges])
    want_o2b = np.full(len(idx), -1)
    for b, (s, e) in enumerate(ranges):
        want_o2b[s:e] = b
    np.testing.assert_array_equal(N(o2b), want_o2b)
    if mode == "max":
        m = N(mi)
        for b in range(len(ranges)):
            for d in range(5):
                if m[b, d] >= 0:
                    assert w[m[b, d], d] == N(out)[b, d]
                else:
                    assert N(bsz)[b] == 0

    w64 = w.astype(np.float64)
    p64 = None if psw is None else psw.astype(np.float64)

    def f(w):
        return N(nn.embedding_bag_forward(T(w), it, ot, mode, None if p64 is None else T(p64),
                                          last, pad)[0])

    def bwd(gy):
        _, o2b, bsz, mi = nn.embedding_bag_forward(T(w64), it, ot, mode,
                                                   None if p64 is None else T(p64), last, pad)
        return [N(nn.embedding_bag_backward_params(strided(gy), it, o2b, bsz, mi, 7, mode,
                                                   None if p64 is None else T(p64), pad))]
    fd_check(f, [w64], bwd)
    if mode == "sum":   # and the gradient of the per-sample weights
        _, o2b, _, _ = nn.embedding_bag_forward(T(w64), it, ot, mode, T(p64), last, pad)
        fd_check(lambda p: N(nn.embedding_bag_forward(T(w64), it, ot, mode, T(p), last,
                                                      pad)[0]), [p64],
                 lambda gy: [N(nn.embedding_bag_backward_per_sample_weights(
                     strided(gy), strided(w64), it, o2b, mode, pad))])


def test_embedding_bag_bad_input():
    w = th.randn(5, 3)
    ofs = T(np.array([0, 2], dtype=np.int64))
    with pytest.raises(IndexError, match=r"index 9 \(at position 1 of indices\) is out of range "
                                         r"for a table of 5 rows"):
        nn.embedding_bag_forward(w, T(np.array([1, 9, 2], dtype=np.int64)), ofs)
    with pytest.raises(IndexError, match="index -1"):
        nn.embedding_bag_forward(w, T(np.array([1, -1, 2], dtype=np.int64)), ofs)
    idx = T(np.array([1, 2, 3], dtype=np.int64))
    with pytest.raises(ValueError, match="offsets\\[0\\] has to be 0"):
        nn.embedding_bag_forward(w, idx, T(np.array([1, 2], dtype=np.int64)))
    with pytest.raises(ValueError, match="non-decreasing"):
        nn.embedding_bag_forward(w, idx, T(np.array([0, 2, 1], dtype=np.int64)))
    with pytest.raises(ValueError, match="greater than the length of indices"):
        nn.embedding_bag_forward(w, idx, T(np.array([0, 4], dtype=np.int64)))
    with pytest.raises(ValueError, match="only supported for mode='sum' \\(got mode='max'\\)"):
        nn.embedding_bag_forward(w, idx, ofs, "max", th.randn(3))
    with pytest.raises(ValueError, match="per_sample_weights"):
        nn.embedding_bag_forward(w, idx, ofs, "sum", th.randn(4))
    with pytest.raises(RuntimeError, match="scalar type Long but found Float"):
        nn.embedding_bag_forward(w, th.randn(3), ofs)
    with pytest.raises(ValueError, match="1D Tensor"):
        nn.embedding_bag_forward(w, T(np.ones((2, 2), dtype=np.int64)), ofs)
    with pytest.raises(ValueError, match="mode has to be one of"):
        nn.embedding_bag_forward(w, idx, ofs, "median")
    out, o2b, bsz, _ = nn.embedding_bag_forward(w, idx, ofs, "sum")
    with pytest.raises(IndexError, match="offset2bag"):
        nn.embedding_bag_backward_params(out, idx, T(np.array([0, 5, 1], dtype=np.int64)), bsz,
                                         None, 5, "sum")
    with pytest.raises(RuntimeError, match=r"grad_output of shape \[2, 3\]"):
        nn.embedding_bag_backward_params(th.randn(3, 3), idx, o2b, bsz, None, 5, "sum")
    with pytest.raises(ValueError, match="only supported for mode='sum' \\(got mode='mean'\\)"):
        nn.embedding_bag_backward_per_sample_weights(out, w, idx, o2b, "mean")
    with pytest.raises(IndexError, match="offset2bag\\[1\\] = 2 is out of range for 2 bags"):
        nn.embedding_bag_backward_per_sample_weights(out, w, idx,
                                                     T(np.array([0, 2, 1], dtype=np.int64)))
    with pytest.raises(ValueError, match="needs max_indices"):
        nn.embedding_bag_backward_params(out, idx, o2b, bsz, None, 5, "max")
    before = N(w).copy()
    np.testing.assert_array_equal(N(w), before)


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


# ---- PyTorch conformance ---------------------------------------------------------------
def test_against_torch():
    torch = torch_or_skip()
    F = torch.nn.functional
    rng = np.random.default_rng(31)
    x = rng.standard_normal((2, 4, 5, 6))
    tx = torch.from_numpy(x)
    w, b = rng.standard_normal(4), rng.standard_normal(4)
    np.testing.assert_allclose(
        N(nn.group_norm_forward(T(x), 2, T(w), T(b))[0]),
        F.group_norm(tx, 2, torch.from_numpy(w), torch.from_numpy(b)).numpy(), rtol=1e-10,
        atol=1e-12)
    for size in [(7, 9), (12, 12), (3, 4), (10, 13)]:
        np.testing.assert_array_equal(N(nn.upsample_nearest2d_forward(T(x), size)),
                                      F.interpolate(tx, size=size, mode="nearest").numpy())
        for ac in (False, True):
            np.testing.assert_allclose(
                N(nn.upsample_bilinear2d_forward(T(x), size, ac)),
                F.interpolate(tx, size=size, mode="bilinear", align_corners=ac).numpy(),
                rtol=1e-12, atol=1e-12)
    for sf in (1.7, 2.5, 0.6, 1.1):
        want = F.interpolate(tx, scale_factor=sf, mode="nearest")
        got = nn.upsample_nearest2d_forward(T(x), tuple(want.shape[-2:]), (sf, sf))
        np.testing.assert_array_equal(N(got), want.numpy())
        want = F.interpolate(tx, scale_factor=sf, mode="bilinear")
        got = nn.upsample_bilinear2d_forward(T(x), tuple(want.shape[-2:]), False, (sf, sf))
        np.testing.assert_allclose(N(got), want.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(N(nn.reflection_pad2d_forward(T(x), (1, 2, 3, 1))),
                                  F.pad(tx, (1, 2, 3, 1), mode="reflect").numpy())
    np.testing.assert_array_equal(N(nn.replication_pad2d_forward(T(x), (-1, 2, 3, -2))),
                                  F.pad(tx, (-1, 2, 3, -2), mode="replicate").numpy())
    x5 = rng.standard_normal((2, 3, 3, 4, 5))
    np.testing.assert_array_equal(N(nn.reflection_pad3d_forward(T(x5), (1, 2, 3, 1, 2, 0))),
                                  F.pad(torch.from_numpy(x5), (1, 2, 3, 1, 2, 0),
                                        mode="reflect").numpy())
    wt = rng.standard_normal((6, 3))
    idx, psw = np.array([0, 2, 5, 5, 1, 3]), rng.standard_normal(6)
    for ofs, last in [(np.array([0, 1, 1, 4]), False), (np.array([0, 2, 3]), True)]:
        for mode in ("sum", "mean", "max"):
            p = psw if mode == "sum" else None
            tw = torch.from_numpy(wt).requires_grad_()
            want = F.embedding_bag(torch.from_numpy(idx), tw, torch.from_numpy(ofs), mode=mode,
                                   per_sample_weights=None if p is None else torch.from_numpy(p),
                                   include_last_offset=last, padding_idx=5)
            got, o2b, bsz, mi = nn.embedding_bag_forward(T(wt), T(idx), T(ofs), mode,
                                                         None if p is None else T(p), last, 5)
            np.testing.assert_allclose(N(got), want.detach().numpy(), rtol=1e-12, atol=1e-12)
            gy = rng.standard_normal(tuple(want.shape))
            want.backward(torch.from_numpy(gy))
            gw = nn.embedding_bag_backward_params(T(gy), T(idx), o2b, bsz, mi, 6, mode,
                                                  None if p is None else T(p), 5)
            np.testing.assert_allclose(N(gw), tw.grad.numpy(), rtol=1e-12, atol=1e-12)
            if p is not None:
                tp = torch.from_numpy(p).requires_grad_()
                F.embedding_bag(torch.from_numpy(idx), torch.from_numpy(wt), torch.from_numpy(ofs),
                                mode="sum", per_sample_weights=tp, include_last_offset=last,
                                padding_idx=5).backward(torch.from_numpy(gy))
                gp = nn.embedding_bag_backward_per_sample_weights(T(gy), T(wt), T(idx), o2b,
                                                                  "sum", 5)
                np.testing.assert_allclose(N(gp), tp.grad.numpy(), rtol=1e-12, atol=1e-12)
    a, c = rng.standard_normal((5, 4)), rng.standard_normal((5, 4))
    y = np.array([1.0, -1, 1, -1, -1])
    np.testing.assert_allclose(
        N(nn.cosine_embedding_loss_forward(T(a), T(c), T(y), 0.1, "mean")),
        F.cosine_embedding_loss(torch.from_numpy(a), torch.from_numpy(c), torch.from_numpy(y),
                                0.1).numpy(), rtol=1e-12)
    np.testing.assert_allclose(
        N(nn.kl_div_forward(T(a), T(np.abs(c)), "sum")),
        F.kl_div(torch.from_numpy(a), torch.from_numpy(np.abs(c)), reduction="sum").numpy(),
        rtol=1e-12)


# ---- sizes past THNN_GRAIN (the loops on the thread pool) ---------------------------------
def test_large_inputs_take_the_parallel_paths():
    rng = np.random.default_rng(32)
    x = rng.standard_normal((4, 16, 24, 24))                      # 36864 elements
    w, b = rng.standard_normal(16), rng.standard_normal(16)
    y, m, r = nn.group_norm_forward(T(x), 4, T(w), T(b))
    np.testing.assert_allclose(N(y), group_norm_ref(x, 4, w, b, 1e-5)[0], rtol=1e-10, atol=1e-10)

    def gn_bwd(gy):
        gw, gb = nn.group_norm_backward_params(T(gy), T(x), 4, m, r)
        return [N(nn.group_norm_backward_input(T(gy), T(x), 4, T(w), m, r)), N(gw), N(gb)]
    fd_check(lambda x, w, b: N(nn.group_norm_forward(T(x), 4, T(w), T(b))[0]), [x, w, b],
             gn_bwd)

    # linear maps: the backward is the adjoint, <gy, f(x)> = <f*(gy), x>
    def adjoint(f, fstar, x):
        y = f(x)
        gy = rng.standard_normal(y.shape)
        np.testing.assert_allclose(np.sum(gy * y), np.sum(fstar(gy) * x), rtol=1e-10)
        return y

    xs = rng.standard_normal((2, 16, 40, 40))
    y = adjoint(lambda x: N(nn.upsample_bilinear2d_forward(T(x), (88, 56), False)),
                lambda g: N(nn.upsample_bilinear2d_backward_input(T(g), xs.shape, False)), xs)
    ref = np.einsum("oh,nchw,pw->ncop", linear_weights(88, 40, False, None), xs,
                    linear_weights(56, 40, False, None))
    np.testing.assert_allclose(y, ref, rtol=1e-12, atol=1e-12)
    y = adjoint(lambda x: N(nn.upsample_nearest2d_forward(T(x), (88, 56))),
                lambda g: N(nn.upsample_nearest2d_backward_input(T(g), xs.shape)), xs)
    np.testing.assert_array_equal(y, xs[..., nearest_index(88, 40, None), :]
                                  [..., nearest_index(56, 40, None)])
    y = adjoint(lambda x: N(nn.reflection_pad2d_forward(T(x), (3, 2, 1, 4))),
                lambda g: N(nn.reflection_pad2d_backward_input(T(g), xs.shape, (3, 2, 1, 4))),
                xs)
    np.testing.assert_array_equal(y, pad_ref(xs, 2, "reflect", (3, 2, 1, 4)))
    x3 = rng.standard_normal((2, 4, 12, 14, 14))
    y = adjoint(lambda x: N(nn.replication_pad3d_forward(T(x), (1, 2, 3, 0, 2, 2))),
                lambda g: N(nn.replication_pad3d_backward_input(T(g), x3.shape,
                                                                (1, 2, 3, 0, 2, 2))), x3)
    np.testing.assert_array_equal(y, pad_ref(x3, 3, "edge", (1, 2, 3, 0, 2, 2)))

    table = rng.standard_normal((50, 160))
    idx = rng.integers(0, 50, 400)
    offs = np.sort(rng.integers(0, 400, 60))
    offs[0] = 0
    it, ot = T(idx), T(offs)
    for mode in ("sum", "mean"):
        _, o2b, bsz, mi = nn.embedding_bag_forward(T(table), it, ot, mode, None, False, 7)
        y = adjoint(lambda t: N(nn.embedding_bag_forward(T(t), it, ot, mode, None, False, 7)[0]),
                    lambda g: N(nn.embedding_bag_backward_params(T(g), it, o2b, bsz, mi, 50,
                                                                 mode, None, 7)), table)
        np.testing.assert_allclose(y, embedding_bag_ref(table, idx, offs, mode, None, False, 7),
                                   rtol=1e-12, atol=1e-12)

    a, c = rng.standard_normal((300, 120)), rng.standard_normal((300, 120))
    t = np.sign(rng.standard_normal(300))
    fd_check(lambda a, c: N(nn.cosine_embedding_loss_forward(T(a), T(c), T(t), 0.1, "sum")),
             [a, c], lambda gy: [N(g) for g in nn.cosine_embedding_loss_backward_input(
                 th.from_numpy(np.array(gy)), T(a), T(c), T(t), 0.1, "sum")])
    big = rng.standard_normal(40000)
    np.testing.assert_allclose(N(nn.kl_div_forward(T(big), T(np.abs(big)), "mean")),
                               np.mean(np.abs(big) * (np.log(np.abs(big)) - big)), rtol=1e-10)


def test_embedding_bag_empty():
    w = T(np.random.default_rng(33).standard_normal((4, 3)))
    none = T(np.zeros(0, dtype=np.int64))
    out, o2b, bsz, _ = nn.embedding_bag_forward(w, none, T(np.array([0, 0], dtype=np.int64)))
    np.testing.assert_array_equal(N(out), np.zeros((2, 3)))
    np.testing.assert_array_equal(N(bsz), [0, 0])
    out, _, _, mi = nn.embedding_bag_forward(w, none, none, "max")
    assert tuple(out.shape) == (0, 3) and tuple(mi.shape) == (0, 3)
    gw = nn.embedding_bag_backward_params(th.zeros(2, 3, dtype=th.float64), none, o2b, bsz,
                                          None, 4, "sum")
    np.testing.assert_array_equal(N(gw), np.zeros((4, 3)))
