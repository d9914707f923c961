"""The searching, counting and order-statistic ops on CUDA tensors against
ember.th: unique, searchsorted/bucketize, bincount, histc, scatter_reduce
with prod/amax/amin (and scatter_(reduce='multiply')), on fresh random
data per dtype x layout, with ties and NaN, and their errors (type and
message).  median (which ember.th lacks) and mode against a NumPy
statement of their rules, mode against ember.th too; multinomial
statistically."""
import numpy as np
import pytest

import ember.th as th
import ember.thc as thc

from thc_testing import (LAYOUTS, assert_same, assert_same_outcome, each, host_values, ids,
                         pair, requires_device, seeded_rng)

pytestmark = requires_device

SORTABLE = [th.float32, th.float64, th.float16, th.int64, th.int32, th.uint8, th.bool]
NUMERIC = [th.float32, th.float64, th.int64, th.int32, th.uint8]


@pytest.fixture
def rng(request):
    return seeded_rng(request)


def _ties(h, g):
    """Few distinct values, so that there are ties."""
    if h.dtype is th.bool:
        return h, g
    if h.dtype.is_floating_point:
        return h.round(), g.round()
    return h.remainder(4), g.remainder(4)


def assert_same_error(gpu_call, cpu_call, what=""):
    """Both raise the same exception type with the same message."""
    with pytest.raises(Exception) as want:
        cpu_call()
    with pytest.raises(Exception) as got:
        gpu_call()
    assert type(got.value) is type(want.value), f"{what}: {got.value!r} vs {want.value!r}"
    assert str(got.value) == str(want.value), what


# ---- unique ------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", SORTABLE, ids=ids(SORTABLE))
def test_unique(dtype, rng):
    def check(layout):
        h, g = _ties(*pair(rng, (6, 5), dtype, layout))
        for inverse in (False, True):
            for counts in (False, True):
                assert_same(g.unique(return_inverse=inverse, return_counts=counts),
                            h.unique(return_inverse=inverse, return_counts=counts),
                            what=f"unique {inverse} {counts}")
        assert_same(thc.unique(g, sorted=False), th.unique(h, sorted=False))
    each(LAYOUTS, check)


def test_unique_nan_and_long_input(rng):
    values = [2.0, float("nan"), 1.0, 2.0, float("nan")]
    h, g = th.tensor(values), thc.tensor(values)
    assert_same(g.unique(return_inverse=True, return_counts=True),
                h.unique(return_inverse=True, return_counts=True))
    h, g = _ties(*pair(rng, (3000,), th.int64))
    assert_same(g.unique(return_counts=True), h.unique(return_counts=True))
    with pytest.raises(NotImplementedError, match="dim"):
        g.unique(dim=0)


# ---- searchsorted / bucketize ---------------------------------------------------
@pytest.mark.parametrize("dtype", NUMERIC, ids=ids(NUMERIC))
def test_searchsorted(dtype, rng):
    def check(layout):
        hb, gb = _ties(*pair(rng, (4, 9), dtype))
        hb, gb = hb.sort(-1).values, gb.sort(-1).values
        hv, gv = _ties(*pair(rng, (4, 6), dtype, layout))
        if hv.ndim == 2 and hv.shape[0] == 4:   # rows of boundaries per row of values
            for right in (False, True):
                assert_same(thc.searchsorted(gb, gv, right=right),
                            th.searchsorted(hb, hv, right=right), what=f"2-d {right}")
        for right in (False, True):
            for out_int32 in (False, True):
                assert_same(thc.searchsorted(gb[1], gv, right=right, out_int32=out_int32),
                            th.searchsorted(hb[1], hv, right=right, out_int32=out_int32),
                            what=f"1-d {right} {out_int32}")
        assert_same(thc.searchsorted(gb[0], gv, side="right"),
                    th.searchsorted(hb[0], hv, side="right"))
        assert_same(thc.bucketize(gv, gb[2], right=True), th.bucketize(hv, hb[2], right=True))
        assert_same(gv.bucketize(gb[2]) if hasattr(gv, "bucketize") else
                    thc.bucketize(gv, gb[2]), th.bucketize(hv, hb[2]))
    each(LAYOUTS, check)


def test_searchsorted_sorter_scalars_nan_and_promotion(rng):
    hb, gb = pair(rng, (7,), th.float64)
    hs, gs = hb.argsort(), gb.argsort()
    hv, gv = pair(rng, (5,), th.float64)
    assert_same(thc.searchsorted(gb, gv, sorter=gs), th.searchsorted(hb, hv, sorter=hs))
    assert_same(thc.searchsorted(gb, gv, sorter=hs), th.searchsorted(hb, hv, sorter=hs))
    sb = hb.sort().values
    for v in (0.5, 2, -100, True):
        assert_same(thc.searchsorted(thc.tensor(sb), v), th.searchsorted(sb, v), what=str(v))
    nan = [1.0, 2.0, float("nan")]
    assert_same(thc.searchsorted(thc.tensor(nan), thc.tensor([float("nan"), 1.5])),
                th.searchsorted(th.tensor(nan), th.tensor([float("nan"), 1.5])))
    ib = th.tensor([1, 3, 5])
    assert_same(thc.searchsorted(thc.tensor(ib), thc.tensor([2.5, 3.0])),
                th.searchsorted(ib, th.tensor([2.5, 3.0])))
    assert_same(thc.searchsorted(thc.empty(0), thc.tensor([1.0])),
                th.searchsorted(th.empty(0), th.tensor([1.0])))


def test_searchsorted_errors():
    hb, gb = th.tensor([1.0, 2.0]), thc.tensor([1.0, 2.0])
    hv, gv = th.tensor([[1.5]] * 3), thc.tensor([[1.5]] * 3)
    assert_same_error(lambda: thc.searchsorted(gb, gv, side="middle"),
                      lambda: th.searchsorted(hb, hv, side="middle"))
    assert_same_error(lambda: thc.searchsorted(gb, gv, right=True, side="left"),
                      lambda: th.searchsorted(hb, hv, right=True, side="left"))
    assert_same_error(lambda: thc.searchsorted(gb[0], gv), lambda: th.searchsorted(hb[0], hv))
    h2, g2 = th.ones(2, 4), thc.ones(2, 4)
    assert_same_error(lambda: thc.searchsorted(g2, gv), lambda: th.searchsorted(h2, hv))


# ---- bincount ---------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [th.int64, th.int32, th.uint8, th.int16],
                         ids=ids([th.int64, th.int32, th.uint8, th.int16]))
def test_bincount(dtype, rng):
    def check(layout):
        if layout in ("0d", "transposed", "broadcast"):
            h, g = pair(rng, (30,), dtype, layout, low=0, high=12)
        else:
            h, g = pair(rng, (30,), dtype, layout, low=0, high=12)
        if h.ndim != 1:
            assert_same_error(lambda: g.bincount(), lambda: h.bincount())
            return
        for minlength in (0, 5, 40):
            assert_same(g.bincount(minlength=minlength), h.bincount(minlength=minlength),
                        what=f"minlength {minlength}")
        for wd in (th.float32, th.float64, th.int64, th.float16):
            hw, gw = pair(rng, (h.shape[0],), wd)
            assert_same(g.bincount(gw), h.bincount(hw), what=f"weights {wd}")
            assert_same(thc.bincount(g, weights=gw, minlength=3),
                        th.bincount(h, weights=hw, minlength=3))
    each(LAYOUTS, check)


def test_bincount_errors():
    cases = [(lambda m: m.tensor([1, -1, 2]).bincount(), "negative"),
             (lambda m: m.tensor([[1, 2]]).bincount(), "2-d"),
             (lambda m: m.tensor([1.0, 2.0]).bincount(), "float"),
             (lambda m: m.tensor([True]).bincount(), "bool"),
             (lambda m: m.tensor([1, 2]).bincount(minlength=-1), "minlength"),
             (lambda m: m.tensor([1, 2]).bincount(m.tensor([1.0])), "weights")]
    for call, what in cases:
        assert_same_error(lambda: call(thc), lambda: call(th), what)


# ---- histc --------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [th.float32, th.float64, th.float16],
                         ids=ids([th.float32, th.float64, th.float16]))
def test_histc(dtype, rng):
    def check(layout):
        h, g = pair(rng, (7, 9), dtype, layout)
        for bins, lo, hi in ((10, 0, 0), (7, -2, 2), (1, -4, 4), (100, -1.5, 3.25), (5, 1, 1)):
            assert_same_outcome(lambda: g.histc(bins, lo, hi), lambda: h.histc(bins, lo, hi),
                                what=f"{bins} {lo} {hi}")
        assert_same(thc.histc(g, bins=4), th.histc(h, bins=4))
    each(LAYOUTS, check)


def test_histc_edges_and_errors():
    values = [0.0, 1.0, 1.0, 2.0, 3.0, 5.0]   # the max falls in the last bin; outside skipped
    assert_same(thc.tensor(values).histc(3, 0, 3), th.tensor(values).histc(3, 0, 3))
    assert_same(thc.tensor([2.0, 2.0]).histc(4), th.tensor([2.0, 2.0]).histc(4))  # min == max
    out = thc.empty(3)
    assert thc.tensor(values).histc(3, 0, 3, out=out) is out
    cases = [(lambda m: m.tensor([1, 2]).histc(), "int"),
             (lambda m: m.tensor([1.0]).histc(0), "bins"),
             (lambda m: m.tensor([1.0]).histc(3, 2, 1), "max < min"),
             (lambda m: m.tensor([1.0, float("nan")]).histc(3), "nan range"),
             (lambda m: m.tensor([1.0]).histc(3, 0, float("inf")), "inf range")]
    for call, what in cases:
        assert_same_error(lambda: call(thc), lambda: call(th), what)


# ---- 1- and 2-byte targets: atomics on the 4-byte word that holds them ----------------
@pytest.mark.parametrize("dtype", [th.int8, th.uint8, th.int16, th.bool],
                         ids=ids([th.int8, th.uint8, th.int16, th.bool]))
def test_small_element_scatters_leave_their_neighbours_alone(dtype, rng):
    """Targets at every byte position of a word (odd length, a view starting
    at an odd element), many sources per target, values that wrap: each
    target gets exactly libTH's result and the bytes around it stay."""
    n = 11
    base_h, base_g = pair(rng, (n + 2,), dtype, low=-100, high=100)
    hs, gs = base_h[1:n + 1], base_g[1:n + 1]   # starts inside a word
    hi = th.tensor(rng.integers(0, n, 200))
    gi = thc.tensor(hi)
    hsrc, gsrc = pair(rng, (200,), dtype, low=-100, high=100)
    for name, call in (
            ("scatter_add", lambda t, i, s: t.scatter_add_(0, i, s)),
            ("index_add", lambda t, i, s: t.index_add_(0, i, s)),
            ("amax", lambda t, i, s: t.scatter_reduce_(0, i, s, "amax")),
            ("amin", lambda t, i, s: t.scatter_reduce_(0, i, s, "amin")),
            ("prod", lambda t, i, s: t.scatter_reduce_(0, i, s, "prod"))):
        wh, wg = base_h.clone(), base_g.clone()
        call(wh[1:n + 1], hi, hsrc)
        call(wg[1:n + 1], gi, gsrc)
        assert_same(wg, wh, what=name)   # the two neighbours included


def test_writes_read_operands_sharing_their_memory_first(rng):
    """src, index or mask in self's own memory: the result is libTH's (every
    operand as it was before the write), not whatever order threads run in."""
    for name, call in (
            ("index_add_ self", lambda m, x: x.index_add_(0, m.tensor([1, 2, 3, 4, 0]), x)),
            ("index_copy_ view", lambda m, x: x[:4].index_copy_(0, m.tensor([1, 2, 3, 0]),
                                                                x[1:])),
            ("scatter_ self", lambda m, x: x.scatter_(0, m.tensor([1, 2, 3, 4, 0]), x)),
            ("scatter_add_ view", lambda m, x: x[1:].scatter_add_(0, m.tensor([0, 1, 2, 3]),
                                                                   x[:4]))):
        hx, gx = pair(rng, (5,), th.float64)
        call(th, hx)
        call(thc, gx)
        assert_same(gx, hx, what=name)
    hi, gi = th.tensor([3, 0, 4, 1, 2]), thc.tensor([3, 0, 4, 1, 2])
    hi.scatter_(0, hi, th.tensor([7, 8, 9, 5, 6]))   # self is the index
    gi.scatter_(0, gi, thc.tensor([7, 8, 9, 5, 6]))
    assert_same(gi, hi, what="scatter_ into its own index")
    hm, gm = th.tensor([True, False, True, True, False]), thc.tensor(
        [True, False, True, True, False])
    hm[1:].masked_fill_(hm[:4], False)   # a bool tensor masked by a view of itself
    gm[1:].masked_fill_(gm[:4], False)
    assert_same(gm, hm, what="masked_fill_ by a view of self")


# ---- scatter_reduce prod / amax / amin -----------------------------------------------
@pytest.mark.parametrize("dtype", [th.float32, th.float64, th.float16, th.int64, th.int32,
                                   th.int16, th.uint8, th.bool],
                         ids=ids([th.float32, th.float64, th.float16, th.int64, th.int32,
                                  th.int16, th.uint8, th.bool]))
def test_scatter_reduce_prod_amax_amin(dtype, rng):
    def check(case):
        reduce, dim, include_self = case
        hs, gs = pair(rng, (4, 5), dtype, low=-3, high=3)
        hsrc, gsrc = pair(rng, (4, 5), dtype, "transposed", low=-3, high=3)
        size = 4 if dim in (0, -2) else 5
        hi = th.tensor(rng.integers(0, size, (3, 4)))   # collisions: few targets
        gi = thc.tensor(hi)
        assert_same(gs.scatter_reduce(dim, gi, gsrc, reduce, include_self=include_self),
                    hs.scatter_reduce(dim, hi, hsrc, reduce, include_self=include_self),
                    what=str(case))
        gt, ht = gs.clone(), hs.clone()
        gt.scatter_reduce_(dim, gi, gsrc, reduce, include_self=include_self)
        ht.scatter_reduce_(dim, hi, hsrc, reduce, include_self=include_self)
        assert_same(gt, ht, what=f"in place {case}")
    each([(r, d, s) for r in ("prod", "amax", "amin") for d in (0, 1, -1)
          for s in (True, False)], check)


def test_scatter_multiply_nan_0d_and_errors(rng):
    hs, gs = pair(rng, (3, 4), th.float64)
    hi = th.tensor([[0, 1, 0, 2], [2, 2, 1, 0]])
    hsrc, gsrc = pair(rng, (2, 4), th.float64)
    assert_same(gs.clone().scatter_(0, thc.tensor(hi), gsrc, reduce="multiply"),
                hs.clone().scatter_(0, hi, hsrc, reduce="multiply"))
    assert_same(gs.scatter(0, thc.tensor(hi), 2.5, reduce="multiply"),
                hs.scatter(0, hi, 2.5, reduce="multiply"))
    nan = th.tensor([[1.0, float("nan")], [3.0, -1.0]])
    idx = th.tensor([[0, 0], [0, 0]])
    for reduce in ("amax", "amin", "prod"):
        assert_same(thc.zeros(1, 2).scatter_reduce(0, thc.tensor(idx), thc.tensor(nan), reduce),
                    th.zeros(1, 2).scatter_reduce(0, idx, nan, reduce), what=reduce)
    h0, g0 = th.tensor(2.0), thc.tensor(2.0)
    i0 = th.tensor(0)
    assert_same(g0.scatter_reduce(0, thc.tensor(i0), thc.tensor(5.0), "amax"),
                h0.scatter_reduce(0, i0, th.tensor(5.0), "amax"))
    he, ge = th.zeros(2, 3), thc.zeros(2, 3)
    ie = th.zeros(0, 3, dtype=th.int64)
    assert_same(ge.scatter_reduce(0, thc.tensor(ie), thc.zeros(0, 3), "prod", include_self=False),
                he.scatter_reduce(0, ie, th.zeros(0, 3), "prod", include_self=False))
    with pytest.raises(RuntimeError, match="index 3 is out of bounds for dimension 0 with size 3"):
        gs.scatter_reduce(0, thc.tensor([[3, 0, 0, 0]]), gsrc, "amax")
    with pytest.raises(RuntimeError, match="index -1 is out of bounds for dimension 0 with size 3"):
        gs.scatter_reduce(0, thc.tensor([[-1, 0, 0, 0]]), gsrc, "amax")
    for call in (lambda t, i, s: t.scatter_reduce(0, i, s, "max"),
                 lambda t, i, s: t.scatter_(0, i, s, reduce="divide"),
                 lambda t, i, s: t.scatter_reduce(0, i, s.float(), "prod"),
                 lambda t, i, s: t.scatter_reduce(0, i, s.float(), "amin", include_self=False)):
        assert_same_error(lambda: call(gs, thc.tensor(hi), gsrc), lambda: call(hs, hi, hsrc))


# ---- median and mode ---------------------------------------------------------------
def _median_ref(a, dim):
    """The lower median along dim (a NaN propagates: the first NaN) and its
    index in the stable order."""
    a = np.moveaxis(a, dim, -1)
    order = np.argsort(a, axis=-1, kind="stable")
    s = np.take_along_axis(a, order, -1)
    k = (a.shape[-1] - 1) // 2
    pos = np.full(a.shape[:-1], k)
    if a.dtype.kind == "f":
        isnan = np.isnan(s)
        pos = np.where(isnan.any(-1), isnan.argmax(-1), pos)
    v = np.take_along_axis(s, pos[..., None], -1)[..., 0]
    i = np.take_along_axis(order, pos[..., None], -1)[..., 0]
    return v, i


def _mode_ref(a, dim):
    """The most frequent value (smallest on ties) and its last index."""
    a = np.moveaxis(a, dim, -1)
    vals = np.empty(a.shape[:-1], a.dtype)
    idx = np.empty(a.shape[:-1], np.int64)
    for pos in np.ndindex(*a.shape[:-1]):
        row = a[pos]
        best, best_n = None, 0
        for v in sorted(set(row.tolist()), key=lambda x: (x != x, x)):
            n = int(np.sum(row == v)) if v == v else 1
            if n > best_n:
                best, best_n = v, n
        vals[pos] = best
        idx[pos] = np.nonzero(row == best)[0].max() if best == best else \
            np.nonzero(np.isnan(row))[0][0]
    return vals, idx


@pytest.mark.parametrize("dtype", [th.float32, th.float64, th.int64, th.int32, th.uint8],
                         ids=ids([th.float32, th.float64, th.int64, th.int32, th.uint8]))
def test_median_and_mode(dtype, rng):
    def check(case):
        layout, dim, keepdim = case
        h, g = _ties(*pair(rng, (5, 6), dtype, layout))
        if h.ndim == 0 and dim not in (0, -1):
            return
        a = host_values(h)
        if h.numel() == 0 or (h.ndim and h.shape[dim] == 0):
            if h.ndim and h.shape[dim] == 0:
                for op in ("median", "mode"):
                    with pytest.raises(IndexError, match=f"{op}\\(\\): Expected reduction dim"):
                        getattr(g, op)(dim)
            return
        for op, ref in (("median", _median_ref), ("mode", _mode_ref)):
            r = getattr(g, op)(dim, keepdim)
            assert type(r).__name__ == op and r._fields == ("values", "indices")
            want_v, want_i = ref(a.reshape(a.shape or (1,)), dim if a.ndim else 0)
            if keepdim and a.ndim:
                want_v, want_i = np.expand_dims(want_v, dim), np.expand_dims(want_i, dim)
            want_shape = a.shape if not a.ndim else want_v.shape
            assert r.values.dtype is h.dtype and r.indices.dtype is th.int64
            assert tuple(r.values.shape) == tuple(want_shape), f"{op} {case}"
            np.testing.assert_array_equal(host_values(r.values).reshape(-1),
                                          want_v.reshape(-1), err_msg=f"{op} {case}")
            np.testing.assert_array_equal(host_values(r.indices).reshape(-1),
                                          want_i.reshape(-1), err_msg=f"{op} {case}")
        m, want = g.mode(dim, keepdim), h.mode(dim, keepdim)   # the same as libTH
        np.testing.assert_array_equal(host_values(m.values), host_values(want.values))
        np.testing.assert_array_equal(host_values(m.indices), host_values(want.indices))
        whole = g.median()
        assert whole.ndim == 0 and whole.dtype is h.dtype
        flat = np.sort(a.reshape(-1), kind="stable")
        assert host_values(whole) == flat[(flat.size - 1) // 2]
    each([(lay, d, k) for lay in LAYOUTS for d in (0, 1, -1) for k in (False, True)
          if lay != "0d" or d in (0, -1)], check)


def test_median_mode_nan_halves_and_empty():
    x = thc.tensor([[3.0, float("nan"), 1.0, float("nan")], [4.0, 2.0, 2.0, 1.0]])
    m = x.median(1)
    assert np.isnan(host_values(m.values)[0]) and host_values(m.values)[1] == 2.0
    assert host_values(m.indices).tolist() == [1, 1]
    assert np.isnan(host_values(x.median()))
    assert np.isnan(host_values(thc.empty(0).median()))
    with pytest.raises(IndexError):
        thc.empty(0, dtype=thc.int64).median()
    md = x.mode(1)
    assert host_values(md.values)[1] == 2.0 and host_values(md.indices)[1] == 2
    for d in (th.float16, th.bfloat16):
        h = thc.tensor([1.0, 3.0, 3.0, 2.0]).to(d)
        assert h.median().dtype is d and host_values(h.median()) == 2.0
        assert host_values(h.mode().values) == 3.0 and host_values(h.mode().indices) == 2
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.median(2)


# ---- multinomial ---------------------------------------------------------------------
def test_multinomial_with_replacement_follows_the_probabilities():
    p = [0.1, 0.0, 0.6, 0.3]
    for d in (thc.float32, thc.float64, thc.float16):
        probs = thc.tensor([p, p[::-1]]).to(d) * 5   # unnormalised weights
        s = probs.multinomial(20000, replacement=True)
        assert s.dtype is thc.int64 and tuple(s.shape) == (2, 20000)
        for row, want in zip(host_values(s), (p, p[::-1])):
            freq = np.bincount(row, minlength=4) / row.size
            assert freq[want.index(0.0)] == 0
            np.testing.assert_allclose(freq, want, atol=0.015)


def test_multinomial_without_replacement():
    g = thc.Generator().manual_seed(5)
    p = thc.tensor([[0.0, 1.0, 2.0, 3.0, 4.0, 0.0]] * 300)
    s = host_values(p.multinomial(4, generator=g))
    assert s.shape == (300, 4)
    assert all(len(set(row)) == 4 for row in s)
    assert not np.isin(s, [0, 5]).any()           # zero weights never drawn
    first = np.bincount(s[:, 0], minlength=6) / 300  # first draw ~ p / sum
    np.testing.assert_allclose(first, [0, 0.1, 0.2, 0.3, 0.4, 0], atol=0.08)
    one = thc.tensor([1.0, 1.0, 1.0]).multinomial(3)
    assert tuple(one.shape) == (3,) and sorted(host_values(one).tolist()) == [0, 1, 2]


def test_multinomial_is_reproducible_per_seed():
    p = thc.tensor([[0.2, 0.3, 0.5], [0.9, 0.05, 0.05]])
    for replacement in (True, False):
        a = p.multinomial(3, replacement, generator=thc.Generator().manual_seed(7))
        b = p.multinomial(3, replacement, generator=thc.Generator().manual_seed(7))
        assert host_values(a).tolist() == host_values(b).tolist()
        thc.manual_seed(11)
        c = thc.multinomial(p, 3, replacement)
        thc.manual_seed(11)
        assert host_values(thc.multinomial(p, 3, replacement)).tolist() == \
            host_values(c).tolist()
    many = [host_values(p.multinomial(3, True)).tolist() for _ in range(6)]
    assert len({str(m) for m in many}) > 1   # the generator advances


def test_multinomial_errors_match_the_cpu():
    cases = [(lambda m: m.ones(2, 2, 2).multinomial(1), "3-d"),
             (lambda m: m.tensor([1, 2]).multinomial(1), "int"),
             (lambda m: m.ones(3).multinomial(0), "n <= 0"),
             (lambda m: m.ones(3).multinomial(4), "n > categories"),
             (lambda m: m.tensor([1.0, -1.0]).multinomial(1), "negative"),
             (lambda m: m.tensor([1.0, float("nan")]).multinomial(1), "nan"),
             (lambda m: m.tensor([1.0, float("inf")]).multinomial(1, True), "inf"),
             (lambda m: m.tensor([[1.0, 1.0], [0.0, 0.0]]).multinomial(1), "zero row"),
             (lambda m: m.tensor([1.0, 0.0, 0.0]).multinomial(2), "too few positive")]
    for call, what in cases:
        assert_same_error(lambda: call(thc), lambda: call(th), what)
    assert tuple(thc.ones(0, 3).multinomial(2).shape) == (0, 2)
    with pytest.raises(RuntimeError, match="cuda"):
        thc.ones(3).multinomial(1, generator=th.Generator())


# Rows of at least 2048 categories (LONG_ROW in src/random.cu) are checked and
# turned into running sums by whole-device ops (reductions, element-wise ops,
# scans of short chunks) instead of a loop on one thread per row.
LONG = 5000


def test_multinomial_long_rows_with_replacement_follow_the_probabilities(rng):
    heavy = [[3, 1700, 2500, LONG - 1], [0, 2047, 2048, 4000], [1024, 1025, 3333, LONG - 2]]
    w = np.zeros((3, LONG))
    for r, cols in enumerate(heavy):
        w[r, cols] = [4.0, 3.0, 2.0, 1.0]
    tail = (rng.random(w.shape) < 0.2) & (w == 0)
    w[tail] = rng.uniform(0.5, 1.0, int(tail.sum())) * 1e-3   # ~1/20 of each row's mass
    for d in (thc.float32, thc.float64, thc.float16):
        probs = thc.from_numpy(w).to(d)
        want = host_values(probs.double())
        want /= want.sum(1, keepdims=True)
        for rows in (probs, probs[1]):   # 2-d, and a 1-d row
            s = host_values(rows.multinomial(20000, replacement=True))
            s, p = (s, want) if s.ndim == 2 else (s[None], want[1:2])
            assert s.shape == (p.shape[0], 20000)
            for row, pr, cols in zip(s, p, heavy if rows is probs else heavy[1:2]):
                freq = np.bincount(row, minlength=LONG) / row.size
                assert (pr[row] > 0).all()                       # zero weights never drawn
                np.testing.assert_allclose(freq[cols], pr[cols], atol=0.015)
                rest = np.setdiff1d(np.arange(LONG), cols)
                np.testing.assert_allclose(freq[rest].sum(), pr[rest].sum(), atol=0.01)


def test_multinomial_long_rows_without_replacement(rng):
    w = np.zeros((200, LONG))
    w[:, [2, 2500, 4100, LONG - 1]] = [1.0, 2.0, 3.0, 4.0]
    extra = rng.random(w.shape) < 0.002    # a few more positive weights per row
    w[extra & (w == 0)] = 0.5
    s = host_values(thc.from_numpy(w).multinomial(4, generator=thc.Generator().manual_seed(5)))
    assert s.shape == (200, 4)
    assert all(len(set(row)) == 4 for row in s)
    assert (np.take_along_axis(w, s, 1) > 0).all()   # zero weights never drawn
    p = w / w.sum(1, keepdims=True)
    first = np.bincount(s[:, 0], minlength=LONG) / 200   # first draw ~ p / sum
    np.testing.assert_allclose(first[[2, 2500, 4100, LONG - 1]],
                               p[:, [2, 2500, 4100, LONG - 1]].mean(0), atol=0.1)
    # exactly as many positive weights as samples: all of them, each once
    one = np.zeros(LONG)
    one[[0, 999, LONG - 1]] = [1e-30, 1.0, 5.0]
    got = host_values(thc.from_numpy(one).multinomial(3))
    assert sorted(got.tolist()) == [0, 999, LONG - 1]


def _spread(short, positions, cats):
    """Row(s) of `cats` zero weights with short's weights at `positions`."""
    w = np.zeros(short.shape[:-1] + (cats,))
    w[..., positions] = short
    return w


def test_multinomial_long_rows_draw_as_short_rows(rng):
    """Integer weights add exactly in any order, so a long row holding a short
    row's weights among zeros has the same running sums at them: the same
    seed draws the same categories (mapped to their places), though the two
    rows are prepared differently.  Also over 1024 * 1024 categories, where
    the running sums' chunks are split again."""
    short = rng.integers(0, 6, (3, 1000)).astype(float)
    short[:, ::7] = 0
    for cats in (LONG, 1024 * 1024 + 5):
        # zeros before, between (at chunk starts too) and after the weights
        where = np.sort(rng.choice(np.arange(1, cats - 1), 1000, replace=False))
        wide = _spread(short, where, cats)
        pairs = [(short, wide), (short[0], wide[0])] if cats == LONG else [(short[:1], wide[:1])]
        for rows in pairs:
            a, b = (thc.from_numpy(r).multinomial(3000, True,
                                                  generator=thc.Generator().manual_seed(3))
                    for r in rows)
            assert host_values(b).tolist() == where[host_values(a)].tolist()
    # without replacement the race's keys follow category indices: trailing zeros only
    wide = _spread(short[0], np.arange(1000), LONG)
    a, b = (thc.from_numpy(r).multinomial(50, generator=thc.Generator().manual_seed(4))
            for r in (short[0], wide))
    assert host_values(a).tolist() == host_values(b).tolist()


def test_multinomial_long_rows_with_huge_weights():
    # row 0 sums to inf (1e308 + 1e308): scaled by 1 / the largest weight, as
    # short rows; row 1 (1.2e308) is finite but near enough to overflow in
    # another order, so is scaled too
    w = np.zeros((2, LONG))
    w[0, [10, 2000, 4500]] = [1e308, 1e308, 5e307]
    w[1, [7, 3000, LONG - 1]] = [6e307, 6e307, 1e300]
    probs = thc.from_numpy(w)
    s = host_values(probs.multinomial(20000, True, generator=thc.Generator().manual_seed(9)))
    assert (np.take_along_axis(w, s, 1) > 0).all()
    np.testing.assert_allclose(np.bincount(s[0], minlength=LONG)[[10, 2000, 4500]] / 20000,
                               [0.4, 0.4, 0.2], atol=0.015)
    np.testing.assert_allclose(np.bincount(s[1], minlength=LONG)[[7, 3000]] / 20000,
                               [0.5, 0.5], atol=0.015)
    s = host_values(probs.multinomial(3, generator=thc.Generator().manual_seed(9)))
    assert sorted(s[0].tolist()) == [10, 2000, 4500]
    assert sorted(s[1].tolist()) == [7, 3000, LONG - 1]
    # DBL_MAX first, then weights each under half its last place: they add
    # nothing to it one by one (as a loop over the row adds them), but
    # overflow it once added together first, as chunked sums can (here: the
    # running sums' second chunk; ninths, as the reduction's first chunk of
    # 9 interleaved ones, which then stays finite).  All of the row's
    # probability is on category 0.
    top = np.zeros(LONG)
    top[0], top[72:136:9] = np.finfo(np.float64).max, 2.0 ** 969
    for cats in (LONG, 200):
        s = host_values(thc.from_numpy(top[:cats]).multinomial(1000, True))
        assert (s == 0).all(), cats
    # the same weights in short rows draw the same frequencies
    short = w[:, [10, 2000, 4500, 7, 3000, LONG - 1]]
    s = host_values(thc.from_numpy(short).multinomial(20000, True))
    np.testing.assert_allclose(np.bincount(s[0], minlength=6)[:3] / 20000, [0.4, 0.4, 0.2],
                               atol=0.015)
    np.testing.assert_allclose(np.bincount(s[1], minlength=6)[3:5] / 20000, [0.5, 0.5],
                               atol=0.015)


def test_multinomial_long_rows_are_reproducible_per_seed(rng):
    w = rng.random((2, LONG)) * (rng.random((2, LONG)) < 0.1)
    p = thc.from_numpy(w)
    for replacement in (True, False):
        a, b = (p.multinomial(5, replacement, generator=thc.Generator().manual_seed(7))
                for _ in range(2))
        assert host_values(a).tolist() == host_values(b).tolist()
        thc.manual_seed(11)
        c = thc.multinomial(p, 5, replacement)
        thc.manual_seed(11)
        assert host_values(thc.multinomial(p, 5, replacement)).tolist() == \
            host_values(c).tolist()
        many = [host_values(p.multinomial(5, replacement)).tolist() for _ in range(4)]
        assert len({str(m) for m in many}) > 1   # the generator advances


def test_multinomial_long_row_errors_match_short_rows():
    """Each error of a long row has the type and message of the same error in
    a short row (and of ember.th's); with several bad rows, the first one's."""
    def rows(cats, *bad):
        """Rows of weights 1 with, per row, None (fine), 'zero', or a value
        put in the middle of the row."""
        w = [[1.0] * cats for _ in bad]
        for r, b in enumerate(bad):
            if b == "zero":
                w[r] = [0.0] * cats
            elif b is not None:
                w[r][cats // 2] = b
        return w
    nan, inf = float("nan"), float("inf")
    cases = [((nan,), 1, True), ((nan,), 1, False), ((inf,), 1, True), ((inf,), 1, False),
             ((-1.0,), 1, True), ((-1.0,), 1, False), ((-inf,), 1, True),
             ((None, "zero"), 1, True), ((None, "zero"), 1, False),
             ((None, "zero", nan), 1, True), ((None, inf, "zero"), 1, True),
             ((None, "zero", -1.0), 2, False)]
    for bad, n, replacement in cases:
        def call(m, cats):
            return m.tensor(rows(cats, *bad), dtype=m.float64).multinomial(n, replacement)
        what = f"{bad} {n} {replacement}"
        assert_same_error(lambda: call(thc, LONG), lambda: call(th, LONG), what)
        with pytest.raises(RuntimeError) as in_short:
            call(thc, 4)
        with pytest.raises(RuntimeError) as in_long:
            call(thc, LONG)
        assert str(in_long.value) == str(in_short.value), what
    # without replacement: fewer positive weights than samples
    for cats in (4, LONG):
        w = [0.0] * cats
        w[cats - 1] = 2.0
        assert_same_error(lambda: thc.tensor(w).multinomial(2),
                          lambda: th.tensor(w).multinomial(2), f"too few positive, {cats}")
