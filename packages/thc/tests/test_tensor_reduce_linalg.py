"""Reductions and matrix products on CUDA tensors against ember.th: each
reduction x dtype x layout x dims/keepdim, max/min/argmax with indices,
var/std corrections, norms, and every matrix product shape case."""
import math

import pytest

import ember.th as th
import ember.thc as thc

from thc_testing import (DTYPES, FLOAT_DTYPES, LAYOUTS, assert_same, assert_same_outcome,
                         each, ids, pair, requires_device, seeded_rng)

pytestmark = requires_device


@pytest.fixture
def rng(request):
    return seeded_rng(request)
SHAPE = (5, 6)

DIMS = [None, 0, 1, -1, (0, 1), [1]]
REDUCTIONS = {
    "sum": lambda x, d, k: x.sum(d, k),
    "sum dtype=float64": lambda x, d, k: x.sum(d, k, dtype=th.float64),
    "nansum": lambda x, d, k: x.nansum(d, k),
    "prod": lambda x, d, k: x.prod(d, k),
    "mean": lambda x, d, k: x.mean(d, k),
    "amax": lambda x, d, k: x.amax(d, k),
    "amin": lambda x, d, k: x.amin(d, k),
    "all": lambda x, d, k: x.all(d, k),
    "any": lambda x, d, k: x.any(d, k),
    "count_nonzero": lambda x, d, k: x.count_nonzero(d),
    "logsumexp": lambda x, d, k: x.logsumexp(d if d is not None else (0, 1), k),
    "var": lambda x, d, k: x.var(d, keepdim=k),
    "var correction=0": lambda x, d, k: x.var(d, keepdim=k, correction=0),
    "std": lambda x, d, k: x.std(d, keepdim=k),
    "std unbiased=False": lambda x, d, k: x.std(d, False, k),
    "norm": lambda x, d, k: x.norm(dim=d, keepdim=k),
    "norm p=1": lambda x, d, k: x.norm(1, d, k),
    "norm p=3": lambda x, d, k: x.norm(3, d, k),
    "norm p=0": lambda x, d, k: x.norm(0, d, k),
    "norm p=inf": lambda x, d, k: x.norm(math.inf, d, k),
    "norm p=-inf": lambda x, d, k: x.norm(-math.inf, d, k),
    "argmax": lambda x, d, k: x.argmax(None if isinstance(d, (tuple, list)) else d, k),
    "argmin": lambda x, d, k: x.argmin(None if isinstance(d, (tuple, list)) else d, k),
    "max": lambda x, d, k: x.max() if d is None else x.max(d if isinstance(d, int) else 0, k),
    "min": lambda x, d, k: x.min() if d is None else x.min(d if isinstance(d, int) else 0, k),
}
# the CPU accumulates in double; libTHC in the computation type: a few
# more ulps for long products and sums of squares
LOOSE = {"prod", "var", "std", "norm", "norm p=3", "logsumexp", "var correction=0",
         "std unbiased=False"}


# libTHC differences from libTH still open, as (strict, reason) xfails
KNOWN_C_ISSUES = {}


def _cases(names, dtypes):
    """(name, dtype) parameters, the known libTHC issues marked xfail."""
    out = []
    for n in names:
        for d in dtypes:
            issue = KNOWN_C_ISSUES.get((n, d.name))
            marks = [pytest.mark.xfail(strict=issue[0], reason=issue[1])] if issue else []
            out.append(pytest.param(n, d, marks=marks, id=f"{n}-{d.name}"))
    return out


@pytest.mark.parametrize("name,dtype", _cases(sorted(REDUCTIONS), DTYPES))
def test_reduction(name, dtype, rng):
    """Each reduction over every dims choice with and without keepdim, in
    every layout (0-d and empty included): the CPU's values, dtype and
    shape, or the CPU's error type."""
    fn = REDUCTIONS[name]
    loose = name.split()[0] in LOOSE or name in LOOSE
    low, high = (0.5, 1.5) if name.startswith("prod") else (None, None)

    def check(case):
        layout, dim, keepdim = case
        h, g = pair(rng, SHAPE, dtype, layout, low, high)
        if layout == "0d" and dim not in (None, 0, -1):
            return  # a 0-d tensor has one dim to name
        rtol = {th.float32: 1e-4, th.float16: 4e-3}.get(dtype) if loose else None
        assert_same_outcome(lambda: fn(g, dim, keepdim), lambda: fn(h, dim, keepdim),
                            rtol=rtol, atol=rtol, what=name)
    each([(lay, d, k) for lay in LAYOUTS for d in DIMS for k in (False, True)], check)


@pytest.mark.parametrize("name,dtype", _cases(["max"], DTYPES))
def test_max_min_indices_take_the_first_occurrence(name, dtype, rng):
    """With ties (few distinct values) the index is the first one, as on
    the CPU; NaN wins."""
    h, g = pair(rng, (6, 8), dtype, "transposed", 0, 2)
    h, g = h.round() if dtype.is_floating_point else h, g.round() if dtype.is_floating_point else g
    for dim in (0, 1, -1):
        assert_same(g.max(dim), h.max(dim), what=f"max {dim}")
        assert_same(g.min(dim, keepdim=True), h.min(dim, keepdim=True), what=f"min {dim}")
        # arg-reductions refuse bool on both devices
        assert_same_outcome(lambda: g.argmax(dim), lambda: h.argmax(dim), what=f"argmax {dim}")
        assert_same_outcome(lambda: g.argmin(dim), lambda: h.argmin(dim), what=f"argmin {dim}")
    assert_same_outcome(g.argmax, h.argmax, what="argmax")
    if dtype.is_floating_point:
        vals = [1.0, float("nan"), 3.0, float("nan")]
        hn, gn = th.tensor(vals).to(dtype), thc.tensor(vals).to(dtype)
        assert_same(gn.max(0), hn.max(0))
        assert_same(gn.amax(), hn.amax())
        assert_same(gn.argmin(), hn.argmin())


def test_max_of_two_tensors_and_named_results(rng):
    h, g = pair(rng, SHAPE, th.float32, "contiguous")
    h2, g2 = pair(rng, SHAPE, th.float32, "transposed")
    assert_same(g.max(g2), h.max(h2))
    assert_same(g.min(g2), h.min(h2))
    r = g.max(1)
    assert type(r).__name__ == "max" and r.values is r[0] and r.indices is r[1]
    assert_same(thc.aminmax(g, dim=0), th.aminmax(h, dim=0))
    assert_same(thc.var_mean(g, 1), th.var_mean(h, 1))
    assert_same(thc.std_mean(g), th.std_mean(h))


def test_reduction_errors():
    g = thc.zeros(0, 3)
    with pytest.raises(RuntimeError, match="Expected reduction dim to be specified"):
        g.max()
    with pytest.raises(IndexError, match="Dimension out of range"):
        thc.ones(2, 3).argmax(2)
    with pytest.raises(RuntimeError, match="floating point"):
        thc.ones(2, dtype=th.int64).norm()
    with pytest.raises(RuntimeError, match="identity"):
        g.norm(math.inf)


# ---- matrix products -------------------------------------------------------
MATMUL_SHAPES = [
    ((5,), (5,)), ((3, 5), (5,)), ((5,), (5, 4)), ((3, 5), (5, 4)),
    ((2, 3, 5), (5, 4)), ((2, 3, 5), (5,)), ((5,), (2, 5, 4)), ((2, 3, 5), (2, 5, 4)),
    ((2, 1, 3, 5), (4, 5, 2)), ((1, 3, 5), (6, 5, 2)), ((3, 0), (0, 4)), ((0, 3), (3, 2)),
    ((3, 5), (4, 2)), ((2, 3, 5), (3, 4, 2)), ((), (5,)), ((4,), (5,)),
]
MM_LAYOUTS = ["contiguous", "transposed", "sliced"]


def _operands(rng, shapes, dtype, layout):
    return [pair(rng, s, dtype, layout if len(s) else "0d") for s in shapes]


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=ids(FLOAT_DTYPES))
def test_matmul_every_shape_case(dtype, rng):
    """matmul (and @) dispatches onto dot/mv/mm/bmm with broadcast batch
    dims as PyTorch does; bad shapes raise the CPU's error type."""
    def check(case):
        shapes, la, lb = case
        (ha, ga), (hb, gb) = (_operands(rng, shapes[:1], dtype, la)[0],
                              _operands(rng, shapes[1:], dtype, lb)[0])
        assert_same_outcome(lambda: thc.matmul(ga, gb), lambda: th.matmul(ha, hb),
                            what=f"matmul {shapes}")
        assert_same_outcome(lambda: ga @ gb, lambda: ha @ hb, what=f"@ {shapes}")
    each([(s, la, lb) for s in MATMUL_SHAPES for la in MM_LAYOUTS for lb in MM_LAYOUTS
          if la == lb or la == "contiguous"], check)


PRODUCTS = {
    "dot": (((6,), (6,)), lambda m, a, b: m.dot(a, b)),
    "mv": (((4, 6), (6,)), lambda m, a, b: m.mv(a, b)),
    "mm": (((4, 6), (6, 3)), lambda m, a, b: m.mm(a, b)),
    "bmm": (((2, 4, 6), (2, 6, 3)), lambda m, a, b: m.bmm(a, b)),
    "outer": (((4,), (6,)), lambda m, a, b: m.outer(a, b)),
    "mm out=": (((4, 6), (6, 3)), lambda m, a, b: m.mm(a, b, out=m.zeros(4, 3, dtype=a.dtype))),
    "addmm": (((4, 6), (6, 3)), lambda m, a, b: m.addmm(m.ones(3, dtype=a.dtype), a, b)),
    "addmm beta alpha": (((4, 6), (6, 3)),
                         lambda m, a, b: m.addmm(m.ones(4, 3, dtype=a.dtype), a, b,
                                                 beta=0.5, alpha=2)),
    "addmm number": (((4, 6), (6, 3)), lambda m, a, b: m.addmm(1.5, a, b)),
    "addmm beta=0 ignores NaN": (((4, 6), (6, 3)),
                                 lambda m, a, b: m.addmm(m.full((4, 3), float("nan"),
                                                                dtype=a.dtype), a, b, beta=0)),
    "addmv": (((4, 6), (6,)), lambda m, a, b: m.addmv(m.ones(4, dtype=a.dtype), a, b,
                                                      beta=2, alpha=0.5)),
    "addmv 0-d": (((4, 6), (6,)), lambda m, a, b: m.addmv(m.ones((), dtype=a.dtype), a, b)),
    "baddbmm": (((2, 4, 6), (2, 6, 3)),
                lambda m, a, b: m.baddbmm(m.ones(4, 3, dtype=a.dtype), a, b, alpha=-1)),
    "addbmm": (((2, 4, 6), (2, 6, 3)),
               lambda m, a, b: m.addbmm(m.ones(3, dtype=a.dtype), a, b, beta=0.5)),
    "addmm_": (((4, 6), (6, 4)), lambda m, a, b: m.ones(4, 4, dtype=a.dtype).addmm_(a, b)),
    "addbmm_": (((3, 4, 6), (3, 6, 2)),
                lambda m, a, b: m.ones(4, 2, dtype=a.dtype).addbmm_(a, b)),
    "dot size mismatch": (((6,), (5,)), lambda m, a, b: m.dot(a, b)),
    "dot 2-d": (((2, 3), (2, 3)), lambda m, a, b: m.dot(a, b)),
    "mv mismatch": (((4, 6), (5,)), lambda m, a, b: m.mv(a, b)),
    "mm mismatch": (((4, 6), (5, 3)), lambda m, a, b: m.mm(a, b)),
    "bmm mismatch": (((2, 4, 6), (3, 6, 3)), lambda m, a, b: m.bmm(a, b)),
    "addbmm batches": (((2, 4, 6), (3, 6, 3)), lambda m, a, b: m.addbmm(0, a, b)),
    "outer 2-d": (((4, 2), (6,)), lambda m, a, b: m.outer(a, b)),
}


# libTH's addbmm rounds the running sum to the half type after each batch;
# ember.thc's is one float32 GEMM over all batches (one rounding): allow
# the CPU's extra rounding error, about an ulp of the largest partial sum
HALF_ADDBMM_ATOL = {th.float16: 0.1, th.bfloat16: 0.5}


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=ids(FLOAT_DTYPES))
@pytest.mark.parametrize("name", sorted(PRODUCTS))
def test_products(name, dtype, rng):
    shapes, fn = PRODUCTS[name]
    atol = HALF_ADDBMM_ATOL.get(dtype) if name.startswith("addbmm") else None

    def check(layout):
        (ha, ga), (hb, gb) = _operands(rng, shapes, dtype, layout)
        assert_same_outcome(lambda: fn(thc, ga, gb), lambda: fn(th, ha, hb), atol=atol,
                            what=name)
    each(MM_LAYOUTS, check)


def test_product_dtype_errors(rng):
    (ha, ga), (hb, gb) = _operands(rng, ((3, 4), (4, 2)), th.float32, "contiguous")
    for what, fn in (("mm", lambda m, a, b: m.mm(a, b.double())),
                     ("dot", lambda m, a, b: m.dot(a[0], b[:, 0].double())),
                     ("matmul", lambda m, a, b: m.matmul(a.unsqueeze(0), b.double())),
                     ("addmm int alpha", lambda m, a, b: m.addmm(a.long()[:, :2], a.long(),
                                                                 b.long(), alpha=0.5))):
        assert_same_outcome(lambda: fn(thc, ga, gb), lambda: fn(th, ha, hb), what=what)
    with pytest.raises(TypeError, match="must be a Tensor"):
        thc.mm(ga, [[1.0]])
    with pytest.raises(RuntimeError, match="same device"):
        thc.mm(ga, hb)


@pytest.mark.parametrize("dtype", [th.int32, th.int64], ids=ids([th.int32, th.int64]))
def test_integer_products_are_composed_or_refused_clearly(dtype, rng):
    """Integer matrix products: the composed ones (outer) match the CPU; the
    GEMM ones either match it or raise a clear error naming the dtype."""
    (ha, ga), (hb, gb) = _operands(rng, ((3, 4), (4, 2)), dtype, "contiguous")
    assert_same(thc.outer(ga[0], gb[:, 0]), th.outer(ha[0], hb[:, 0]))
    for fn in (lambda m, a, b: m.mm(a, b), lambda m, a, b: m.dot(a[0], b[:, 0])):
        try:
            got = fn(thc, ga, gb)
        except (TypeError, RuntimeError, NotImplementedError) as e:
            assert "Int" in str(e) or "Long" in str(e) or "int" in str(e), str(e)
        else:
            assert_same(got, fn(th, ha, hb))
