"""Sorting and searching against NumPy: sort/argsort (stable, descending,
NaN last), topk, kthvalue, mode, unique (inverse, counts), searchsorted/bucketize
(right, side, out_int32, scalars, sorter), bincount (weights, minlength),
histc -- every dtype and layout, and the error paths."""
import math

import numpy as np
import pytest

import ember.th as th

from th_testing import (DTYPES, FLOAT_DTYPES, LAYOUTS, as_dtype, assert_close, each, ids,
                        new_tensor, to_numpy)
from _refs import raises

SHAPE = (4, 5, 6)
NAN = math.nan


def stable_order(x, descending):
    """Indices of a stable sort of 1-d x (NaN counts as the largest)."""
    if not descending:
        return np.argsort(x, kind="stable")
    n = len(x)
    return (n - 1 - np.argsort(x[::-1], kind="stable"))[::-1]


def along(a, dim, fn):
    """Applies fn (1-d -> 1-d) to every line of a along dim."""
    if a.ndim == 0:
        return fn(a.reshape(1)).reshape(())
    if a.size == 0:
        return np.zeros(a.shape, np.int64)
    moved = np.moveaxis(a, dim, -1)
    flat = moved.reshape(-1, moved.shape[-1])
    out = np.stack([fn(r) for r in flat]) if len(flat) else np.zeros(
        flat.shape, np.int64)
    return np.moveaxis(out.reshape(moved.shape[:-1] + out.shape[-1:]), -1, dim)


def take_lines(a, idx, dim):
    return np.take_along_axis(a, idx, axis=dim) if a.ndim else a


def ties_kw(d):
    return {"discrete": True} if d.is_floating_point else {}


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("d", DTYPES, ids=ids(DTYPES))
def test_sort_argsort(make, d, layout):
    t, a = make(SHAPE, d, layout, **ties_kw(d))  # ties, so stability shows
    dims = [0, 1, -1] if t.ndim else [0, -1]

    def check(case):
        dim, descending, stable = case
        r = t.sort(dim, descending=descending, stable=stable)
        assert type(r).__name__ == "sort"
        order = along(a, dim, lambda x: stable_order(x, descending))
        exp_vals = take_lines(a, order, dim)
        assert_close(r.values, exp_vals, d)
        if stable:
            assert_close(r.indices, order, th.int64)
            assert_close(th.argsort(t, dim, descending=descending, stable=True), order,
                         th.int64)
        else:  # ties may come in any order: the indices must pick the values
            idx = to_numpy(r.indices)
            assert_close(r.indices, idx, th.int64)
            np.testing.assert_array_equal(
                take_lines(np.asarray(a), idx, dim) if a.ndim else a, exp_vals)
            assert sorted(along(idx, dim, np.sort).reshape(-1).tolist()) == \
                sorted(along(order, dim, np.sort).reshape(-1).tolist())

    each([(dim, desc, st) for dim in dims for desc in (False, True) for st in (False, True)],
         check)


@pytest.mark.parametrize("d", FLOAT_DTYPES, ids=ids(FLOAT_DTYPES))
def test_sort_nan_and_inf(d):
    x = np.array([3.0, NAN, 1.0, -math.inf, NAN, 1.0, math.inf, -0.0])
    t = new_tensor(as_dtype(x, d), d)
    v, i = t.sort(stable=True)
    assert_close(v, [-math.inf, -0.0, 1.0, 1.0, 3.0, math.inf, NAN, NAN], d)
    assert_close(i, [3, 7, 2, 5, 0, 6, 1, 4], th.int64)  # NaN last
    v, i = t.sort(descending=True, stable=True)
    assert_close(v, [NAN, NAN, math.inf, 3.0, 1.0, 1.0, -0.0, -math.inf], d)
    assert_close(i, [1, 4, 6, 0, 2, 5, 7, 3], th.int64)  # NaN first
    assert_close(t.msort(), [-math.inf, -0.0, 1.0, 1.0, 3.0, math.inf, NAN, NAN], d)
    v, i = t.topk(3)
    assert_close(v, [NAN, NAN, math.inf], d)
    assert sorted(to_numpy(i)[:2].tolist()) == [1, 4] and i[2].item() == 6
    v, i = t.topk(2, largest=False)
    assert_close(v, [-math.inf, -0.0], d)
    v, i = t.kthvalue(7)
    assert math.isnan(v.item()) and i.item() in (1, 4)


# ---- topk / kthvalue -----------------------------------------------------
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("d", DTYPES, ids=ids(DTYPES))
def test_topk(make, d, layout):
    t, a = make(SHAPE, d, layout, **ties_kw(d))
    dims = [0, 1, -1] if t.ndim else [0, -1]

    def check(case):
        dim, k, largest, is_sorted = case
        n = a.shape[dim] if a.ndim else 1
        if k > n:
            with raises(RuntimeError, "selected index k out of range"):
                t.topk(k, dim)
            return
        r = t.topk(k, dim, largest=largest, sorted=is_sorted)
        assert type(r).__name__ == "topk"
        full = along(a, dim, lambda x: stable_order(x, largest))
        exp = take_lines(a, full, dim)
        exp = np.take(exp, range(k), axis=dim) if a.ndim else exp
        vals, idx = to_numpy(r.values), to_numpy(r.indices)
        assert r.indices.dtype is th.int64 and vals.shape == exp.shape
        if not is_sorted:  # any order: compare sorted lines
            vals = along(vals, dim, np.sort) if a.ndim else vals
            exp = along(exp, dim, np.sort) if a.ndim else exp
        np.testing.assert_array_equal(vals, np.asarray(as_dtype(exp, d)) if d is not th.bool
                                      else exp)
        np.testing.assert_array_equal(take_lines(np.asarray(a), idx, dim) if a.ndim else a,
                                      to_numpy(r.values))  # the indices pick the values
        if a.ndim and k:  # distinct indices
            assert all(len(set(line)) == len(line) for line in
                       np.moveaxis(idx, dim, -1).reshape(-1, k).tolist())

    each([(dim, k, lg, st) for dim in dims for k in (0, 1, 3, 6, 7)
          for lg in (True, False) for st in (True, False)], check)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("d", [x for x in DTYPES if x is not th.bool], ids=ids(
    [x for x in DTYPES if x is not th.bool]))
def test_kthvalue(make, d, layout):
    t, a = make(SHAPE, d, layout, **ties_kw(d))
    dims = [0, 1, -1] if t.ndim else [0, -1]

    def check(case):
        dim, k, keepdim = case
        n = a.shape[dim] if a.ndim else 1
        if n == 0:
            with raises(IndexError, f"kthvalue(): Expected reduction dim {dim % a.ndim} to "
                                    "have non-zero size."):
                t.kthvalue(k, dim)
            return
        if not 1 <= k <= n:
            with raises(RuntimeError, "kthvalue(): selected number k out of range for "
                                      "dimension"):
                t.kthvalue(k, dim)
            return
        r = t.kthvalue(k, dim, keepdim=keepdim)
        assert type(r).__name__ == "kthvalue"
        if a.ndim:
            exp = np.take(np.sort(a, axis=dim), k - 1, axis=dim)
            if keepdim:
                exp = np.expand_dims(exp, dim)
        else:
            exp = a
        assert_close(r.values, exp, d)
        assert r.indices.dtype is th.int64 and tuple(r.indices.shape) == exp.shape
        idx = to_numpy(r.indices)
        if a.ndim:  # the index points at a k-th value
            picked = np.take_along_axis(a, idx if keepdim else np.expand_dims(idx, dim),
                                        axis=dim)
            np.testing.assert_array_equal(picked.reshape(exp.shape), exp)

    each([(dim, k, kd) for dim in dims for k in (0, 1, 3, 5, 6, 7) for kd in (False, True)],
         check)


# ---- mode ----------------------------------------------------------------
def mode_ref(a, dim):
    """The most frequent value along dim (the smallest on ties; each NaN
    counts once) and the index of its last occurrence, by counting."""
    moved = np.moveaxis(a, dim, -1)
    vals = np.empty(moved.shape[:-1], a.dtype)
    idx = np.empty(moved.shape[:-1], np.int64)
    for pos in np.ndindex(*moved.shape[:-1]):
        row = moved[pos]
        best, best_n = None, 0
        for v in sorted(set(row.tolist()), key=lambda x: (x != x, x)):
            n = int(np.sum(row == v)) if v == v else 1
            if n > best_n:
                best, best_n = v, n
        vals[pos] = best
        idx[pos] = np.nonzero(row == best)[0].max() if best == best else \
            np.nonzero(np.isnan(row))[0][0]
    return vals, idx


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("d", DTYPES, ids=ids(DTYPES))
def test_mode(make, d, layout):
    t, a = make(SHAPE, d, layout, **ties_kw(d))  # repeats, so there is a mode
    dims = [0, 1, -1] if t.ndim else [0, -1]
    a32 = np.asarray(a, np.float32) if d in (th.float16, th.bfloat16) else np.asarray(a)

    def check(case):
        dim, keepdim = case
        if a.ndim and a.shape[dim] == 0:
            with raises(IndexError, f"mode(): Expected reduction dim {dim % a.ndim} to "
                                    "have non-zero size."):
                t.mode(dim)
            return
        r = t.mode(dim, keepdim)
        assert type(r).__name__ == "mode" and r._fields == ("values", "indices")
        vals, idx = mode_ref(a32.reshape(a32.shape or (1,)), dim if a.ndim else 0)
        if not a.ndim:
            vals, idx = vals.reshape(()), idx.reshape(())
        elif keepdim:
            vals, idx = np.expand_dims(vals, dim), np.expand_dims(idx, dim)
        assert r.values.dtype is d and r.indices.dtype is th.int64
        assert_close(r.values, vals, d)
        assert_close(r.indices, idx, th.int64)

    each([(dim, kd) for dim in dims for kd in (False, True)], check)


def test_mode_rules():
    # ties go to the smallest value, the index to its last occurrence
    r = th.mode(th.tensor([3, 1, 3, 1, 2]), 0)
    assert r.values.item() == 1 and r.indices.item() == 3
    # NaNs never equal: three NaNs lose to a pair
    r = th.tensor([[1.0, 2, 2, 3, 3, NAN, NAN], [5, 5, 1, 1, NAN, NAN, NAN]]).mode(1)
    assert_close(r.values, [2.0, 1.0], th.float32)
    assert_close(r.indices, [2, 3], th.int64)
    r = th.tensor([NAN, NAN]).mode()
    assert math.isnan(r.values.item()) and r.indices.item() == 0
    r = th.tensor(5.0).mode()
    assert r.values.ndim == 0 and r.values.item() == 5.0 and r.indices.item() == 0
    r = th.empty(3, 0).mode(0)  # no rows: empty results
    assert tuple(r.values.shape) == (0,) and tuple(r.indices.shape) == (0,)
    with raises(IndexError, "Dimension out of range"):
        th.tensor([1, 2]).mode(1)
    # long rows take several threads' worth of work: the same answer
    x = np.random.default_rng(5).integers(0, 50, (3, 40000))
    r = th.tensor(x).mode(1)
    vals, idx = mode_ref(x, 1)
    assert_close(r.values, vals, th.int64)
    assert_close(r.indices, idx, th.int64)


# ---- unique ------------------------------------------------------------
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("d", DTYPES, ids=ids(DTYPES))
def test_unique(make, d, layout):
    t, a = make(SHAPE, d, layout, **ties_kw(d))
    vals, inv, cnt = np.unique(a, return_inverse=True, return_counts=True)
    assert_close(t.unique(), vals, d)
    assert_close(th.unique(t, sorted=True), vals, d)
    u, i = t.unique(return_inverse=True)
    assert_close(u, vals, d)
    assert_close(i, inv.reshape(a.shape), th.int64)  # the input's shape
    u, c = th.unique(t, return_counts=True)
    assert_close(c, cnt, th.int64)
    u, i, c = t.unique(return_inverse=True, return_counts=True)
    assert_close(u, vals, d)
    assert_close(i, inv.reshape(a.shape), th.int64)
    assert_close(c, cnt, th.int64)
    # sorted=False: the same set
    assert sorted(to_numpy(t.unique(sorted=False)).tolist()) == sorted(
        np.asarray(vals, dtype=to_numpy(u).dtype).tolist())


def test_unique_nan_and_errors():
    t = th.tensor([3.0, NAN, NAN, 1.0, 3.0])
    u, c = t.unique(return_counts=True)
    assert_close(u, [1.0, 3.0, NAN, NAN], th.float32)  # NaN != NaN: each is unique
    assert_close(c, [1, 2, 1, 1], th.int64)
    with raises(NotImplementedError, "unique(dim=...) is not supported yet"):
        t.unique(dim=0)


# ---- searchsorted / bucketize ------------------------------------------
SEARCH_DTYPES = [th.float32, th.float64, th.float16, th.bfloat16, th.int8, th.uint8,
                 th.int16, th.int32, th.int64]


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced", "0d", "empty"])
@pytest.mark.parametrize("d", SEARCH_DTYPES, ids=ids(SEARCH_DTYPES))
def test_searchsorted(make, rng, d, layout):
    seq_t, seq = make((9,), d, **ties_kw(d))
    seq = np.sort(seq)
    seq_t = new_tensor(seq, d)  # sorted, with repeats
    v_t, v = make((3, 4), d, layout, **ties_kw(d))
    rows_t, rows = make((3, 7), d, **ties_kw(d))
    rows = np.sort(rows, axis=1)
    rows_t = new_tensor(rows, d)

    def check(case):
        how, right_mode = case
        kw, side = {"right": ({"right": True}, "right"), "left": ({}, "left"),
                    "side=right": ({"side": "right"}, "right"),
                    "side=left": ({"side": "left"}, "left"),
                    "int32": ({"out_int32": True}, "left")}[right_mode]
        want = th.int32 if kw.get("out_int32") else th.int64
        if how == "1d":
            r = th.searchsorted(seq_t, v_t, **kw)
            exp = np.searchsorted(seq, v, side=side)
            assert_close(r, exp, want)
            rb = th.bucketize(v_t, seq_t, out_int32=kw.get("out_int32", False),
                              right=side == "right")
            assert_close(rb, exp, want)
        elif how == "rows" and v_t.ndim == 2 and v.shape[0] == 3:
            r = th.searchsorted(rows_t, v_t, **kw)
            exp = np.stack([np.searchsorted(rows[i], v[i], side=side) for i in range(3)])
            assert_close(r, exp, want)
        elif how == "scalar":
            x = int(v.reshape(-1)[0]) if v.size else 1
            r = th.searchsorted(seq_t, x, **kw)
            assert r.ndim == 0
            assert_close(r, np.searchsorted(seq, x, side=side), want)

    each([(h, m) for h in ("1d", "rows", "scalar")
          for m in ("left", "right", "side=right", "side=left", "int32")], check)


def test_searchsorted_sorter_and_mixed_dtypes():
    seq = th.tensor([5.0, 1.0, 3.0, 3.0, 9.0])
    sorter = th.tensor([1, 2, 3, 0, 4])
    vals = th.tensor([0.0, 3.0, 4.0, 10.0])
    assert_close(th.searchsorted(seq, vals, sorter=sorter), [0, 1, 3, 5], th.int64)
    assert_close(th.searchsorted(seq, vals, sorter=sorter, side="right"), [0, 3, 3, 5],
                 th.int64)
    # values of another dtype are compared exactly (promoted, not truncated)
    assert_close(th.searchsorted(th.tensor([1, 2, 3]), th.tensor([2.5, 0.5])), [2, 0],
                 th.int64)
    assert_close(th.searchsorted(th.tensor([1.0, 2.0, 3.0]), th.tensor([2, 0])), [1, 0],
                 th.int64)
    assert_close(th.searchsorted(th.tensor([1.0, 2.0]), 1.5), 1, th.int64)
    assert_close(th.bucketize(th.tensor(2.0), th.tensor([1.0, 2.0]), out_int32=True), 1,
                 th.int32)
    assert_close(th.searchsorted(th.tensor([]), th.tensor([1.0])), [0], th.int64)
    assert_close(th.searchsorted(th.tensor([1.0]), th.tensor([])), np.zeros(0), th.int64)


def test_searchsorted_scalar_is_not_truncated():
    assert th.searchsorted(th.tensor([1, 2, 3]), 2.5).item() == 2
    assert th.bucketize(2.5, th.tensor([1, 2, 3])).item() == 2
    assert th.searchsorted(th.tensor([1, 2, 3], dtype=th.uint8), -1).item() == 0


def test_searchsorted_errors():
    s = th.tensor([1.0, 2.0, 2.0, 4.0])
    v = th.tensor([0.0, 2.0])
    with raises(RuntimeError, "side can only be 'left' or 'right' but got middle"):
        th.searchsorted(s, v, side="middle")
    with raises(RuntimeError, "side and right can't be set to opposites, got side of left "
                              "while right was True"):
        th.searchsorted(s, v, side="left", right=True)
    with raises(RuntimeError, "torch.searchsorted(): boundaries tensor should be 1 dimension "
                              "or the first N-1 dimensions of boundaries tensor and input "
                              "value tensor must match, but we got boundaries tensor [2, 2] "
                              "and input value tensor [3, 1]"):
        th.searchsorted(th.tensor([[1.0, 2.0], [3.0, 4.0]]), th.ones(3, 1))
    with raises(RuntimeError, "boundaries tensor should have positive dimension, but got 0 "
                              "dimension"):
        th.searchsorted(th.tensor(1.0), v)
    with raises(RuntimeError, "boundaries tensor should be 1 dimension"):
        th.bucketize(v, th.tensor([[1.0]]))


# ---- bincount / histc -------------------------------------------------------
BINCOUNT_DTYPES = [th.uint8, th.int8, th.int16, th.int32, th.int64]


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced", "broadcast",
                                    "empty"])
@pytest.mark.parametrize("d", BINCOUNT_DTYPES, ids=ids(BINCOUNT_DTYPES))
def test_bincount(make, d, layout):
    t, a = make((11,), d, layout, low=0, high=9)
    w32_t, w32 = make((11,), th.float32, layout)
    w64_t, w64 = make((11,), th.float64, layout)
    wi_t, wi = make((11,), th.int32, layout)
    a = np.asarray(a, np.int64)
    if a.size == 0:  # as PyTorch: int64 zeros, whatever the weights
        for w in (None, w32_t, w64_t):
            assert_close(th.bincount(t, w, 4), np.zeros(4), th.int64)
        return
    for minlength in (0, 3, 15):
        assert_close(th.bincount(t, minlength=minlength),
                     np.bincount(a, minlength=minlength), th.int64)
        assert_close(t.bincount(weights=w32_t, minlength=minlength),
                     np.bincount(a, w32.astype(np.float64), minlength), th.float32)
        assert_close(th.bincount(t, w64_t, minlength), np.bincount(a, w64, minlength),
                     th.float64)
        # other weight dtypes count in float64, as PyTorch
        assert_close(th.bincount(t, wi_t, minlength), np.bincount(a, wi, minlength),
                     th.float64)


def test_bincount_errors():
    with raises(RuntimeError, "bincount only supports 1-d non-negative integral inputs."):
        th.bincount(th.tensor([0, -1]))
    with raises(RuntimeError, "bincount only supports 1-d non-negative integral inputs."):
        th.bincount(th.tensor([[0, 1]]))
    with raises(TypeError, "bincount: expected an integral input tensor, but got float32"):
        th.bincount(th.tensor([0.0, 1.0]))
    with raises(TypeError, "bincount: expected an integral input tensor, but got bool"):
        th.bincount(th.tensor([True, False]))
    with raises(RuntimeError, "minlength should be >= 0"):
        th.bincount(th.tensor([0, 1]), minlength=-1)
    with raises(RuntimeError, "weights should be 1-d and have the same length as input"):
        th.bincount(th.tensor([0, 1]), weights=th.tensor([1.0]))


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("d", FLOAT_DTYPES, ids=ids(FLOAT_DTYPES))
def test_histc(make, d, layout):
    t, a = make((5, 7), d, layout, low=-3, high=3)
    x = np.asarray(a, np.float64).reshape(-1)

    def check(case):
        bins, lo, hi = case
        r = th.histc(t, bins=bins, min=lo, max=hi)
        if lo == hi == 0:  # the data's range (widened when flat)
            lo, hi = (x.min(), x.max()) if x.size else (0.0, 0.0)
            if lo == hi:
                lo, hi = lo - 1, hi + 1
        exp, _ = np.histogram(x, bins=bins, range=(lo, hi))
        assert r.dtype is d and tuple(r.shape) == (bins,)
        got = to_numpy(r).astype(np.float64)
        # an element on a bin edge may fall either side, by rounding
        assert np.abs(got - exp).sum() <= 2 * np.sum(np.isclose(
            (x[:, None] - lo) / (hi - lo) * bins, np.arange(bins + 1)[None, :],
            atol=1e-2)), (got, exp)
        assert got.sum() == exp.sum()

    each([(b, lo, hi) for b in (1, 4, 10) for lo, hi in ((0, 0), (-3, 3), (-1, 2), (0, 5))],
         check)


def test_histc_exact_cases():
    t = th.tensor([1.0, 2.0, 1.0, 4.0, 5.0, -1.0, 0.0])
    assert_close(th.histc(t, bins=4, min=0, max=4), [1.0, 2.0, 1.0, 1.0], th.float32)
    assert_close(t.histc(4), [2.0, 2.0, 1.0, 2.0], th.float32)  # range [-1, 5]
    assert_close(th.histc(th.tensor([2.0, 2.0]), bins=4), [0.0, 0.0, 2.0, 0.0], th.float32)
    assert_close(th.histc(th.tensor([1.0, NAN]), bins=4, min=0, max=4), [0.0, 1.0, 0.0, 0.0],
                 th.float32)
    assert_close(th.histc(th.tensor([]), bins=3), [0.0, 0.0, 0.0], th.float32)
    out = th.zeros(2)
    assert th.histc(th.tensor([0.5, 1.5]), 2, 0, 2, out=out) is out
    assert_close(out, [1.0, 1.0], th.float32)


def test_histc_errors():
    t = th.tensor([1.0, 2.0])
    with raises(RuntimeError, "torch.histc(): bins must be > 0, but got 0"):
        th.histc(t, bins=0)
    with raises(RuntimeError, "torch.histc: max must be larger than min"):
        th.histc(t, bins=4, min=3, max=1)
    with raises(TypeError, "torch.histc: expected a floating point input tensor, but got "
                           "int64"):
        th.histc(th.tensor([1, 2]), bins=4)
    with raises(RuntimeError, "torch.histc: range of [1, inf] is not finite"):
        th.histc(th.tensor([math.inf, 1.0]), bins=2)


def test_sort_errors():
    t = th.tensor([1.0, 2.0])
    with raises(IndexError, "Dimension out of range (expected to be in range of [-1, 0], but "
                            "got 1)"):
        t.sort(1)
    with raises(IndexError, "Dimension out of range"):
        t.argsort(dim=-2)
    with raises(IndexError, "Dimension out of range"):
        t.topk(1, dim=1)
    with raises(IndexError, "Dimension out of range"):
        t.kthvalue(1, dim=2)
    with raises(RuntimeError, "selected index k out of range"):
        t.topk(3)
    with raises(RuntimeError, "selected index k out of range"):
        t.topk(-1)
    with raises(RuntimeError, "kthvalue(): selected number k out of range for dimension 0"):
        t.kthvalue(0)
    with raises(RuntimeError, "kthvalue(): selected number k out of range for dimension 0"):
        t.kthvalue(3)
    # sorting never changes its input
    u = th.tensor([3.0, 1.0, 2.0])
    u.sort()
    u.topk(2)
    u.unique()
    assert to_numpy(u).tolist() == [3.0, 1.0, 2.0]
