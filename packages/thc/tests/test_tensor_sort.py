"""Sorting on CUDA tensors against ember.th: sort/argsort (both
directions), msort, topk (largest and smallest), kthvalue, for each dtype
x layout x dim, with ties (few distinct values: stability shows in the
indices) and NaN; and their errors."""
import pytest

import ember.th as th
import ember.thc as thc

from thc_testing import (DTYPES, LAYOUTS, assert_same, assert_same_outcome, each, ids, pair,
                         requires_device, seeded_rng)

pytestmark = requires_device


@pytest.fixture
def rng(request):
    return seeded_rng(request)


def _ties(h, g):
    """Few distinct values, so that rows hold ties."""
    if h.dtype.is_floating_point:
        return (h * 2).round(), (g * 2).round()
    return h.remainder(3), g.remainder(3)


@pytest.mark.parametrize("dtype", DTYPES, ids=ids(DTYPES))
def test_sort_topk_kthvalue(dtype, rng):
    def check(case):
        layout, dim = case
        h, g = pair(rng, (5, 7), dtype, layout)
        if dtype is not th.bool:
            h, g = _ties(h, g)
        if h.ndim == 0 and dim not in (0, -1):
            return
        for desc in (False, True):
            assert_same(g.sort(dim, descending=desc), h.sort(dim, descending=desc),
                        what=f"sort {dim} {desc}")
            assert_same(g.argsort(dim, descending=desc), h.argsort(dim, descending=desc))
        n = h.shape[dim] if h.ndim else 1
        for k in {0, 1, n // 2, n}:
            for largest in (True, False):
                assert_same_outcome(lambda: g.topk(k, dim, largest=largest),
                                    lambda: h.topk(k, dim, largest=largest),
                                    what=f"topk {k} {dim} {largest}")
        for k in {1, (n + 1) // 2, n} if n else ():
            for keepdim in (False, True):
                assert_same(g.kthvalue(k, dim, keepdim), h.kthvalue(k, dim, keepdim),
                            what=f"kthvalue {k} {dim} {keepdim}")
        if h.ndim:
            assert_same(g.msort(), h.msort())
    dims = (0, 1, -1)
    each([(lay, d) for lay in LAYOUTS for d in dims if lay != "0d" or d in (0, -1)], check)


@pytest.mark.parametrize("dtype", [th.float32, th.float64, th.float16],
                         ids=ids([th.float32, th.float64, th.float16]))
def test_nan_sorts_above_every_number(dtype):
    values = [3.0, float("nan"), -1.0, float("nan"), 2.0]
    h, g = th.tensor(values).to(dtype), thc.tensor(values).to(dtype)
    for desc in (False, True):
        assert_same(g.sort(descending=desc), h.sort(descending=desc))
    assert_same(g.topk(2), h.topk(2))
    assert_same(g.kthvalue(3), h.kthvalue(3))


def test_errors_match_the_cpu():
    h, g = th.ones(2, 3), thc.ones(2, 3)
    for call in (lambda t: t.topk(4), lambda t: t.kthvalue(0), lambda t: t.kthvalue(4),
                 lambda t: t.sort(2), lambda t: th.empty(0).kthvalue(1) if t is h
                 else thc.empty(0).kthvalue(1)):
        assert_same_outcome(lambda: call(g), lambda: call(h))
    with pytest.raises(RuntimeError, match="selected index k out of range"):
        g.topk(4)


def test_long_rows_and_many_rows(rng):
    h, g = pair(rng, (3, 1000), th.float32)
    assert_same(g.sort(), h.sort())
    h, g = pair(rng, (400, 9), th.int64)
    assert_same(g.sort(0, descending=True), h.sort(0, descending=True))


@pytest.mark.parametrize("length", [33, 64, 257, 5000])
def test_long_rows_sort_in_parallel_passes_stably(rng, length):
    # rows longer than 32 take the parallel merge passes: ties (stability
    # shows in the indices), NaN, both directions, a dim with inner elements
    values = rng.integers(0, 7, size=(2, length, 3)).astype("float64")
    values[0, ::5, 1] = float("nan")
    h, g = th.tensor(values), thc.tensor(values)
    for desc in (False, True):
        assert_same(g.sort(1, descending=desc), h.sort(1, descending=desc))
        assert_same(g.sort(-1, descending=desc), h.sort(-1, descending=desc))
    assert_same(g.topk(5, 1), h.topk(5, 1))
    assert_same(g.topk(5, 1, largest=False), h.topk(5, 1, largest=False))
    assert_same(g.kthvalue(length // 2 + 1, 1), h.kthvalue(length // 2 + 1, 1))
    flat_h, flat_g = h.reshape(-1), g.reshape(-1)
    assert_same(flat_g.sort(), flat_h.sort())
