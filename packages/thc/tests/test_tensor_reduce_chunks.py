"""Reductions long enough for libTHC to split them into chunks (src/reduce.cu:
M outputs of K elements run as M x P chunks whose partials reduce again),
against ember.th: every reduction kind over long rows, full and along a
dim, and the values that need a merge rule of their own (NaN, inf and -inf
in one chunk, ties and NaNs of max/min/argmax in chunks out of index
order, exact integer sums, float32 summed in double)."""
import numpy as np
import pytest

import ember.th as th
import ember.thc as thc

from thc_testing import (DTYPES, assert_same, assert_same_outcome, each, host_tensor, ids,
                         random_array, requires_device, seeded_rng)

pytestmark = requires_device

# libTHC's split (split_of in src/reduce.cu), to place values in one chunk or
# in chunks out of index order; the tests compare with ember.th whatever it is
CHUNK_MIN, CHUNK_TARGET = 512, 1 << 17


def chunks(m, k):
    """Chunks per output of m outputs of k elements; chunk p holds the
    elements p, p + P, p + 2P, ... (1: not split)."""
    if k < 2 * CHUNK_MIN or m >= CHUNK_TARGET:
        return 1
    return min(k // CHUNK_MIN, -(-CHUNK_TARGET // m))


@pytest.fixture
def rng(request):
    return seeded_rng(request)


def _argdim(d):
    return None if isinstance(d, tuple) else d


REDUCTIONS = {
    "sum": lambda x, d: x.sum(d),
    "sum dtype=float64": lambda x, d: x.sum(d, dtype=th.float64),
    "nansum": lambda x, d: x.nansum(d),
    "prod": lambda x, d: x.prod(d) if d is None or isinstance(d, int) else x.prod(),
    "mean": lambda x, d: x.mean(d),
    "amax": lambda x, d: x.amax(d) if d is not None else x.amax(),
    "amin": lambda x, d: x.amin(d) if d is not None else x.amin(),
    "all": lambda x, d: x.all(d) if isinstance(d, int) else x.all(),
    "any": lambda x, d: x.any(d) if isinstance(d, int) else x.any(),
    "count_nonzero": lambda x, d: x.count_nonzero(d),
    "logsumexp": lambda x, d: x.logsumexp(d if d is not None else tuple(range(x.ndim))),
    "var": lambda x, d: x.var(d),
    "var unbiased=False": lambda x, d: x.var(d, False),
    "var correction=2": lambda x, d: x.var(d, correction=2),
    "std": lambda x, d: x.std(d),
    "std keepdim": lambda x, d: x.std(d, keepdim=True),
    "argmax": lambda x, d: x.argmax(_argdim(d)),
    "argmin": lambda x, d: x.argmin(_argdim(d), keepdim=True),
    "max": lambda x, d: x.max(d) if isinstance(d, int) else x.max(),
    "min": lambda x, d: x.min(d) if isinstance(d, int) else x.min(),
}

# (shape, view, dim): a view of a contiguous base; "t" transposes it
CASES = [
    ((300_000,), None, None),
    ((300_000,), None, 0),
    ((3, 100_000), None, 1),
    ((3, 100_000), None, 0),          # many short outputs: not split
    ((3, 100_000), None, (0, 1)),
    ((100_000, 3), None, 0),          # rows of stride 3
    ((3, 100_000), "t", 0),           # a transposed view: contiguous rows
    ((2, 3, 50_000), "t", (0, 2)),    # two reduced dims of a permuted view
]


def _view(t, view):
    return t.permute(*reversed(range(t.ndim))) if view == "t" else t


def _pair(a, dtype, view):
    h = host_tensor(a, dtype)
    return _view(h, view), _view(thc.tensor(h), view)


def _values(rng, shape, dtype, name):
    if name.startswith("prod"):  # near 1 (ints: +-1), so the product stays finite
        return random_array(rng, shape, dtype, -1 if not dtype.is_floating_point else 0.999,
                            1 if not dtype.is_floating_point else 1.001, nonzero=True)
    return random_array(rng, shape, dtype)


def _tolerance(dtype, name):
    if dtype is th.float64 or name == "sum dtype=float64":
        return 1e-10, 1e-9   # sums in another order
    # ember.th sums float32 pairwise in float32 and its long float32
    # products drift too; libTHC accumulates both in double
    if dtype is th.float32 and name.split()[0] in ("var", "std", "logsumexp", "prod"):
        return 1e-4, 1e-4
    return None, None


def test_split_rule_takes_the_chunked_path():
    """The cases below are split (one stage or two) as intended."""
    assert chunks(1, 300_000) > 1 and chunks(3, 100_000) > 1 and chunks(3, 150_000) > 1
    assert chunks(1, chunks(1, 1_000_000)) > 1            # the partials split again
    assert chunks(100_000, 3) == 1 and chunks(1, 1000) == 1


@pytest.mark.parametrize("dtype", DTYPES, ids=ids(DTYPES))
def test_every_reduction_of_long_rows(dtype, rng):
    """Each reduction over long rows (full, along a dim, strided and
    permuted), in every dtype: ember.th's values, dtype and shape, or its
    error type."""
    def check(case):
        name, (shape, view, dim) = case
        h, g = _pair(_values(rng, shape, dtype, name), dtype, view)
        rtol, atol = _tolerance(dtype, name)
        fn = REDUCTIONS[name]
        assert_same_outcome(lambda: fn(g, dim), lambda: fn(h, dim), rtol=rtol, atol=atol,
                            what=f"{name} {shape} {view} dim={dim}")
    each([(n, c) for n in REDUCTIONS for c in CASES], check)


@pytest.mark.parametrize("dtype", [th.float32, th.int64], ids=ids([th.float32, th.int64]))
def test_partials_split_again(dtype, rng):
    """A million elements: the chunks' partials are many enough to be
    split themselves (three stages)."""
    a = random_array(rng, (1_000_000,), dtype)
    h, g = _pair(a, dtype, None)
    for name in ("sum", "nansum", "amax", "amin", "count_nonzero", "argmax", "argmin", "max",
                 "var", "logsumexp"):
        rtol, atol = _tolerance(dtype, name)
        assert_same_outcome(lambda: REDUCTIONS[name](g, None), lambda: REDUCTIONS[name](h, None),
                            rtol=rtol, atol=atol, what=name)


def _nan_inf_arrays(rng, k, p):
    """(what, values): one inf and one -inf `s` apart (s = p: the same
    chunk, whose partial is NaN; others: two chunks), with and without NaNs
    elsewhere; NaNs alone; inf alone."""
    out = []
    for s in (1, p - 1, p, 2 * p, p + 1):
        for start in (0, 12_345):
            a = rng.uniform(-1, 1, k)
            a[start], a[start + s] = np.inf, -np.inf
            out.append((f"inf at {start}, -inf {s} later", a))
            b = a.copy()
            b[start + 3 * s + 7::997] = np.nan
            out.append((f"inf at {start}, -inf {s} later, NaNs", b))
    a = rng.uniform(-1, 1, k)
    a[5::1001] = np.nan
    out.append(("NaNs", a))
    a = a.copy()
    a[p] = np.inf
    out.append(("NaNs and inf", a))
    return out


@pytest.mark.parametrize("dtype", [th.float32, th.float64], ids=ids([th.float32, th.float64]))
def test_nansum_amax_amin_with_nan_and_infinities(dtype, rng):
    """nansum skips NaNs but keeps the NaN of inf + -inf, even when one
    chunk holds both (its partial is NaN); sum, amax/amin and max/min
    propagate NaN: as ember.th."""
    k = 300_000
    names = ("nansum", "sum", "mean", "amax", "amin", "max", "argmin", "logsumexp")

    def check(case):
        what, a = case
        h, g = _pair(a, dtype, None)
        for name in names:
            assert_same_outcome(lambda: REDUCTIONS[name](g, None),
                                lambda: REDUCTIONS[name](h, None), what=f"{name}: {what}")
    each(_nan_inf_arrays(rng, k, chunks(1, k)), check)
    # along a dim: row 1 gets inf and -inf in one chunk
    a = rng.uniform(-1, 1, (3, 100_000))
    p = chunks(3, 100_000)
    a[1, 7], a[1, 7 + p] = np.inf, -np.inf
    a[2, 100::333] = np.nan
    h, g = _pair(a, dtype, None)
    for name in names:
        assert_same(REDUCTIONS[name](g, 1), REDUCTIONS[name](h, 1), what=f"{name} dim 1")
    got = g.nansum(1).cpu().numpy()
    assert np.isnan(got[1]) and np.isfinite(got[0]) and np.isfinite(got[2])


def _tie_cases(k, p):
    """(what, positions of the extreme (or NaN), kind): ties and NaNs in
    chunks out of index order (a later index in a lower chunk), in one
    chunk, at both ends."""
    return [
        ("tie across the wrap", [p - 1, p], "tie"),
        ("tie, later index in a lower chunk", [p + 3, 2 * p + 1], "tie"),
        ("tie in one chunk", [5, 5 + p, 5 + 3 * p], "tie"),
        ("tie, first and last", [0, k - 1], "tie"),
        ("tie at the end", [k - 2, k - 1], "tie"),
        ("NaNs, later index in a lower chunk", [p + 3, 2 * p + 1], "nan"),
        ("NaN last, extreme first", [k - 1], "nan"),
        ("NaNs in one chunk", [2 + p, 2 + 2 * p], "nan"),
    ]


@pytest.mark.parametrize("dtype", [th.float32, th.float64, th.int32, th.int16],
                         ids=ids([th.float32, th.float64, th.int32, th.int16]))
def test_argmax_argmin_ties_and_nan_across_chunks(dtype, rng):
    """max/min/argmax/argmin pick the first index of the extreme, and the
    first NaN, when the candidates lie in different chunks, whatever the
    chunks' order: as ember.th."""
    def check(case):
        (k, m, what, pos, kind), is_max = case
        if kind == "nan" and not dtype.is_floating_point:
            return
        a = rng.integers(-50, 50, (m, k)).astype(np.float64)
        a[:, pos] = np.nan if kind == "nan" else (100.0 if is_max else -100.0)
        if kind == "nan":   # and a tie of the extreme before them
            a[:, [0, 1]] = 100.0 if is_max else -100.0
        h, g = _pair(a if m > 1 else a[0], dtype, None)
        dim = 1 if m > 1 else 0
        hv, gv = (h.max, g.max) if is_max else (h.min, g.min)
        ha, ga = (h.argmax, g.argmax) if is_max else (h.argmin, g.argmin)
        assert_same(gv(dim), hv(dim), what=f"{what} (values, indices)")
        assert_same(ga(dim), ha(dim), what=f"{what} arg")
        assert_same(ga(), ha(), what=f"{what} flat arg")
        assert_same(gv(), hv(), what=f"{what} value")
        if m > 1:   # the same rows as columns (dim 0 of a transposed view)
            assert_same(g.t().argmax(0) if is_max else g.t().argmin(0),
                        h.t().argmax(0) if is_max else h.t().argmin(0), what=f"{what} t")

    cases = []
    for k, m in ((300_000, 1), (100_000, 3), (1_000_000, 1)):
        p = chunks(m, k)
        cases += [((k, m) + c, is_max) for c in _tie_cases(k, p) for is_max in (True, False)]
    # a million: stage 2 splits the stage-1 picks again (ties across it)
    p1 = chunks(1, 1_000_000)
    p2 = chunks(1, p1)
    cases += [((1_000_000, 1, "tie across the second split", [1, p1 + p2], "tie"), True),
              ((1_000_000, 1, "tie across the second split", [p2 - 1, p1], "tie"), False)]
    each(cases, check)


def test_float32_sums_and_products_accumulate_in_double():
    """float32 sums and products that float32 accumulation would get wrong
    (ember.th sums float32 pairwise in float32: 299978 here) give the
    float64 result rounded once, as ember.th's float64 reductions."""
    a = np.ones(300_000)
    a[0], a[-1] = 1e8, -1e8
    h, g = _pair(a, th.float32, None)
    assert g.sum().item() == h.double().sum().item() == 299_998.0
    assert g.mean().item() == np.float32(299_998.0 / 300_000)
    b = np.ones((3, 100_000))
    b[:, 0], b[:, -1] = 1e8, -1e8
    h, g = _pair(b, th.float32, None)
    assert g.sum(1).cpu().numpy().tolist() == [99_998.0] * 3
    assert g.t().sum(0).cpu().numpy().tolist() == [99_998.0] * 3
    c = np.random.default_rng(5).uniform(0.999, 1.001, 300_000)
    h, g = _pair(c, th.float32, None)
    assert_same(g.prod(), h.double().prod().float())
    assert_same(g.reshape(3, 100_000).prod(1), h.double().reshape(3, 100_000).prod(1).float())


@pytest.mark.parametrize("dtype", [th.int64, th.int32], ids=ids([th.int64, th.int32]))
def test_integer_sums_are_exact(dtype, rng):
    """int64 accumulation: sums beyond 2**53 (int64) and 2**31 (int32)
    exactly, as ember.th; products of +-1."""
    hi = 2 ** 44 if dtype is th.int64 else 2 ** 31 - 1
    a = rng.integers(hi // 2, hi, 300_000)
    for what, vals, dim in (("full", a, None), ("rows", a.reshape(3, 100_000), 1),
                            ("columns", a.reshape(100_000, 3), 0)):
        h, g = _pair(vals, dtype, None)
        assert_same(g.sum(dim), h.sum(dim), what=what)
        assert_same(g.nansum(dim), h.nansum(dim), what=what)
        assert_same(g.amax(dim) if dim is not None else g.amax(),
                    h.amax(dim) if dim is not None else h.amax(), what=what)
    s = int(a.sum())
    assert thc.tensor(host_tensor(a, dtype)).sum().item() == s
    signs = np.where(rng.random(300_000) < 0.5, -1, 1)
    h, g = _pair(signs, dtype, None)
    assert_same(g.prod(), h.prod())


@pytest.mark.parametrize("dtype", [th.bool, th.uint8, th.float32],
                         ids=ids([th.bool, th.uint8, th.float32]))
def test_all_any_count_nonzero_with_one_odd_element(dtype):
    """One zero among ones (and one nonzero among zeros) anywhere in a long
    row decides all/any; count_nonzero counts across chunks."""
    k = 300_000
    p = chunks(1, k)
    for pos in (0, p, k - 1, 12_345):
        a = np.ones(k)
        a[pos] = 0
        h, g = _pair(a, dtype, None)
        for fn in (lambda x: x.all(), lambda x: x.any(), lambda x: x.count_nonzero(),
                   lambda x: x.all(0), lambda x: x.count_nonzero(0)):
            assert_same(fn(g), fn(h), what=f"zero at {pos}")
        b = np.zeros(k)
        b[pos] = 1
        h, g = _pair(b, dtype, None)
        for fn in (lambda x: x.all(), lambda x: x.any(), lambda x: x.count_nonzero(),
                   lambda x: x.any(0)):
            assert_same(fn(g), fn(h), what=f"one at {pos}")
    assert thc.ones(3, 100_000, dtype=dtype).count_nonzero(1).cpu().numpy().tolist() == \
        [100_000] * 3
