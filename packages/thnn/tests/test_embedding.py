"""ember.thnn's embedding and embedding_bag: against NumPy, backward, bad
input."""

import numpy as np
import pytest

import ember.th as th
import ember.thnn as nn

from thnn_testing import N, T, TOL, bag_ranges, embedding_bag_ref, fd_check, strided


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
