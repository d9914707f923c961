"""Element-wise ops on CUDA tensors against ember.th (the CPU library is the
reference): every unary and binary op x dtype x layout, Python numbers and
0-d CPU tensors as operands, type promotion between dtypes, in-place forms,
the operators, and the composed ops (lerp, nan_to_num, round(decimals))."""
import operator

import numpy as np
import pytest

import ember.th as th
import ember.thc as thc
from ember.thc import _tensor_ops

from thc_testing import (DTYPES, FLOAT_DTYPES, LAYOUTS, assert_same, assert_same_outcome,
                         each, host_values, ids, pair, requires_device, seeded_rng)

pytestmark = requires_device


@pytest.fixture
def rng(request):
    return seeded_rng(request)
SHAPE = (4, 7)

# name: (float-input domain, integer-input domain); None: the default range
POS = (0.05, 10.0)
UNARY_DOMAINS = {
    "log": (POS, (1, 9)), "log2": (POS, (1, 9)), "log10": (POS, (1, 9)),
    "log1p": ((-0.9, 5), (0, 9)), "sqrt": ((0, 10), (0, 9)), "rsqrt": (POS, (1, 9)),
    "reciprocal": ((0.2, 4), (1, 9)), "tan": ((-1.4, 1.4), None),
    "asin": ((-0.99, 0.99), (-1, 1)), "acos": ((-0.99, 0.99), (-1, 1)),
    "acosh": ((1.05, 10), (1, 9)), "atanh": ((-0.95, 0.95), (0, 0)),
    "erfinv": ((-0.99, 0.99), (0, 0)), "erfc": ((-3, 3), None),
    "exp": ((-5, 5), None), "exp2": ((-5, 5), None), "expm1": ((-3, 3), None),
}
UNARY = sorted(set(_tensor_ops.UNARY_OPS) | {"round"})
PREDICATES = {"isnan", "isinf", "isfinite", "isposinf", "isneginf"}

# name: (a's range, b's range, b nonzero) for floats; ints use the integer parts
BINARY_DOMAINS = {
    "div": (None, None, True), "floor_divide": (None, None, True),
    "remainder": (None, None, True), "fmod": (None, None, True),
    "pow": ((0.1, 3), (-2, 3), False),
    "bitwise_left_shift": (None, (0, 6), False), "bitwise_right_shift": (None, (0, 6), False),
}
BINARY = sorted(set(_tensor_ops.BINARY_OPS) | {"add", "sub", "div"})


def _domain(table, name, dtype):
    dom = table.get(name)
    if dom is None:
        return None, None
    dom = dom[0] if dtype.is_floating_point else dom[1]
    return dom if dom else (None, None)


def test_every_op_is_a_function_and_method_on_both_libraries():
    for name in UNARY + BINARY:
        for lib in (th, thc):
            assert callable(getattr(lib, name)), (lib, name)
        assert hasattr(thc.Tensor, name) and hasattr(th.Tensor, name)


@pytest.mark.parametrize("dtype", DTYPES, ids=ids(DTYPES))
@pytest.mark.parametrize("name", UNARY)
def test_unary(name, dtype, rng):
    """op(t) and t.op() in each layout give the CPU's values and dtype (or
    the CPU's error type), and leave the input as it was."""
    low, high = _domain(UNARY_DOMAINS, name, dtype)

    def check(layout):
        h, g = pair(rng, SHAPE, dtype, layout, low, high)
        before = host_values(g)
        assert_same_outcome(lambda: getattr(thc, name)(g), lambda: getattr(th, name)(h),
                            what=name)
        assert_same_outcome(lambda: getattr(g, name)(), lambda: getattr(h, name)(), what=name)
        np.testing.assert_array_equal(host_values(g), before)
    each(LAYOUTS, check)


@pytest.mark.parametrize("dtype", DTYPES, ids=ids(DTYPES))
@pytest.mark.parametrize("name", sorted(set(UNARY) - PREDICATES))
def test_unary_inplace(name, dtype, rng):
    """t.op_() through a transposed, sliced view writes what the CPU writes
    into the base tensor; a failing one leaves it intact."""
    low, high = _domain(UNARY_DOMAINS, name, dtype)
    hb, gb = pair(rng, (7, 9), dtype, "contiguous", low, high)
    h, g = hb.t()[1:5], gb.t()[1:5]
    before = host_values(gb)
    want = outcome_of(lambda: getattr(h, name + "_")())
    got = outcome_of(lambda: getattr(g, name + "_")())
    if isinstance(want, Exception):
        assert type(got) is type(want), f"CPU raised {want!r}, CUDA gave {got!r}"
        np.testing.assert_array_equal(host_values(gb), before)
        return
    assert got is g
    assert_same(gb, hb, what=name + "_")


def outcome_of(fn):
    try:
        return fn()
    except Exception as e:  # noqa: BLE001 - compared by the caller
        return e


# (a layout, b layout, b shape) for binary ops: both in one layout, and b
# broadcast along rows and columns
BINARY_LAYOUTS = [(lay, lay, SHAPE) for lay in LAYOUTS] + [
    ("contiguous", "contiguous", (7,)), ("transposed", "contiguous", (4, 1)),
    ("0d", "contiguous", SHAPE), ("contiguous", "0d", SHAPE)]


def _binary_pair(rng, name, dtype, la, lb, bshape):
    dom = BINARY_DOMAINS.get(name, (None, None, False))
    adom = dom[0] if dtype.is_floating_point or name != "pow" else (None, None)
    bdom = dom[1] if dtype.is_floating_point or name != "pow" else (0, 4)
    ha, ga = pair(rng, SHAPE, dtype, la, *(adom or (None, None)))
    hb, gb = pair(rng, bshape, dtype, lb, *(bdom or (None, None)), nonzero=dom[2])
    return (ha, hb), (ga, gb)


@pytest.mark.parametrize("dtype", DTYPES, ids=ids(DTYPES))
@pytest.mark.parametrize("name", BINARY)
def test_binary(name, dtype, rng):
    """op(a, b) and a.op(b) for same-layout and broadcast operands."""
    def check(case):
        (ha, hb), (ga, gb) = _binary_pair(rng, name, dtype, *case)
        assert_same_outcome(lambda: getattr(thc, name)(ga, gb),
                            lambda: getattr(th, name)(ha, hb), what=name)
        assert_same_outcome(lambda: getattr(ga, name)(gb), lambda: getattr(ha, name)(hb),
                            what=name)
    each(BINARY_LAYOUTS, check)


SCALARS = [3, -2, 2.5, 0.5, True, False]


@pytest.mark.parametrize("dtype", DTYPES, ids=ids(DTYPES))
@pytest.mark.parametrize("name", BINARY)
def test_binary_with_numbers(name, dtype, rng):
    """Python numbers on either side are wrapped numbers: they rank below
    every tensor in type promotion, as on the CPU."""
    low, high = (0.1, 3) if name == "pow" and dtype.is_floating_point else (None, None)
    h, g = pair(rng, SHAPE, dtype, "transposed", low, high)

    def check(case):
        v, first = case
        if first:
            assert_same_outcome(lambda: getattr(thc, name)(v, g),
                                lambda: getattr(th, name)(v, h), what=name)
        else:
            assert_same_outcome(lambda: getattr(g, name)(v), lambda: getattr(h, name)(v),
                                what=name)
    each([(v, first) for v in SCALARS for first in (False, True)], check)


PROMOTION_OPS = ["add", "mul", "div", "eq", "maximum", "bitwise_and", "floor_divide"]


@pytest.mark.parametrize("name", PROMOTION_OPS)
def test_type_promotion_between_dtypes(name, rng):
    """Mixed-dtype operands give the CPU's result dtype (or error), 0-d
    tensors ranking below dimensioned ones."""
    def check(case):
        da, db, lb = case
        ha, ga = pair(rng, SHAPE, da, "contiguous", nonzero=True)
        hb, gb = pair(rng, SHAPE, db, lb, nonzero=True)
        assert_same_outcome(lambda: getattr(thc, name)(ga, gb),
                            lambda: getattr(th, name)(ha, hb), what=name)
    each([(a, b, lay) for a in DTYPES for b in DTYPES for lay in ("contiguous", "0d")
          if a is not b], check)


@pytest.mark.parametrize("dtype", DTYPES, ids=ids(DTYPES))
@pytest.mark.parametrize("name", BINARY)
def test_binary_inplace(name, dtype, rng):
    """a.op_(b) on a view writes the CPU's values (or raises the CPU's error
    and leaves the base intact), with b a tensor or a number."""
    def check(other):
        (hb_, _), (gb_, _) = _binary_pair(rng, name, dtype, "contiguous", "contiguous", SHAPE)
        hbase, gbase = hb_.t().contiguous().t(), gb_.t().contiguous().t()
        (_, hb), (_, gb) = _binary_pair(rng, name, dtype, "contiguous", "contiguous", (7,))
        hv, gv = (hb, gb) if other == "tensor" else (other, other)
        before = host_values(gbase)
        want = outcome_of(lambda: getattr(hbase, name + "_")(hv))
        got = outcome_of(lambda: getattr(gbase, name + "_")(gv))
        if isinstance(want, Exception):
            assert type(got) is type(want), f"CPU raised {want!r}, CUDA gave {got!r}"
            np.testing.assert_array_equal(host_values(gbase), before)
            return
        assert got is gbase, f"CUDA raised or returned another tensor: {got!r}"
        assert_same(gbase, hbase, what=name + "_")
    each(["tensor", 2, 1.5, True], check)


OPERATORS = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul,
    "truediv": operator.truediv, "floordiv": operator.floordiv, "mod": operator.mod,
    "pow": operator.pow, "and": operator.and_, "or": operator.or_, "xor": operator.xor,
    "lshift": operator.lshift, "rshift": operator.rshift, "eq": operator.eq,
    "ne": operator.ne, "lt": operator.lt, "le": operator.le, "gt": operator.gt,
    "ge": operator.ge,
}


@pytest.mark.parametrize("dtype", DTYPES, ids=ids(DTYPES))
def test_operators(dtype, rng):
    """Binary operators with tensors and numbers on both sides, the
    augmented forms, and the unary operators."""
    ha, ga = pair(rng, SHAPE, dtype, "contiguous", 0.5, 3, nonzero=True)
    hb, gb = pair(rng, SHAPE, dtype, "sliced", 0.5, 3, nonzero=True)

    def check(case):
        name, kind = case
        op = OPERATORS[name]
        if kind == "tensor":
            assert_same_outcome(lambda: op(ga, gb), lambda: op(ha, hb), what=name)
        elif kind == "number":
            assert_same_outcome(lambda: op(ga, 2), lambda: op(ha, 2), what=name)
        elif kind == "reflected":
            assert_same_outcome(lambda: op(2, ga), lambda: op(2, ha), what=name)
        else:  # augmented, on copies
            hc, gc = ha.clone(), ga.clone()
            iop = getattr(operator, "i" + name)
            want = outcome_of(lambda: iop(hc, hb))
            got = outcome_of(lambda: iop(gc, gb))
            if isinstance(want, Exception):
                assert type(got) is type(want), f"CPU raised {want!r}, CUDA gave {got!r}"
            else:
                assert got is gc
                assert_same(gc, hc, what=name)
    cases = [(n, k) for n in OPERATORS for k in ("tensor", "number", "reflected")]
    cases += [(n, "augmented") for n in OPERATORS if n not in ("eq", "ne", "lt", "le", "gt", "ge")]
    each(cases, check)
    for op in (operator.neg, operator.abs, operator.invert, operator.pos):
        assert_same_outcome(lambda: op(ga), lambda: op(ha), what=op.__name__)


@pytest.mark.parametrize("dtype", DTYPES, ids=ids(DTYPES))
def test_zero_dim_cpu_tensor_operands(dtype, rng):
    """A 0-d CPU tensor is a scalar operand (ranked as a 0-d tensor, not a
    number), as PyTorch allows."""
    h, g = pair(rng, SHAPE, dtype, "contiguous", nonzero=True)
    for s in (th.tensor(2.5), th.tensor(3), th.tensor(True), th.tensor(1.5, dtype=th.float16)):
        assert_same_outcome(lambda: g * s, lambda: h * s, what=f"* {s!r}")
        assert_same_outcome(lambda: s + g, lambda: s + h, what=f"{s!r} +")
        assert_same_outcome(lambda: thc.maximum(g, s), lambda: th.maximum(h, s), what="max")


@pytest.mark.parametrize("dtype", DTYPES, ids=ids(DTYPES))
def test_add_sub_alpha_and_div_rounding(dtype, rng):
    (ha, hb), (ga, gb) = _binary_pair(rng, "div", dtype, "transposed", "contiguous", (7,))

    def check(case):
        what, fn = case
        assert_same_outcome(lambda: fn(thc, ga, gb), lambda: fn(th, ha, hb), what=what)
    each([
        ("add alpha=2", lambda m, a, b: m.add(a, b, alpha=2 if dtype is not th.bool else 1)),
        ("add alpha=0.5", lambda m, a, b: m.add(a, b, alpha=0.5)),
        ("sub alpha=3", lambda m, a, b: m.sub(a, b, alpha=3)),
        ("rsub", lambda m, a, b: m.rsub(a, b)),
        ("div trunc", lambda m, a, b: m.div(a, b, rounding_mode="trunc")),
        ("div floor", lambda m, a, b: m.div(a, b, rounding_mode="floor")),
        ("div bad mode", lambda m, a, b: m.div(a, b, rounding_mode="up")),
        ("true_divide", lambda m, a, b: m.true_divide(a, b)),
        ("add out=", lambda m, a, b: m.add(a, b, out=m.empty(SHAPE, dtype=a.dtype))),
        ("round decimals=2", lambda m, a, b: m.round(a, decimals=2)),
        ("round decimals=-1", lambda m, a, b: m.round(a * 40, decimals=-1)),
    ], check)


@pytest.mark.parametrize("dtype", DTYPES, ids=ids(DTYPES))
def test_clamp_and_where(dtype, rng):
    h, g = pair(rng, SHAPE, dtype, "transposed")
    hlo, glo = pair(rng, (7,), dtype, "contiguous", -4, 0)
    hc, gc = pair(rng, SHAPE, th.bool, "sliced")

    def check(case):
        what, fn = case
        assert_same_outcome(lambda: fn(thc, g, glo, gc), lambda: fn(th, h, hlo, hc), what=what)
    each([
        ("clamp numbers", lambda m, x, lo, c: m.clamp(x, -1, 2)),
        ("clamp min", lambda m, x, lo, c: x.clamp(min=1)),
        ("clamp max", lambda m, x, lo, c: x.clip(max=1)),
        ("clamp tensor", lambda m, x, lo, c: x.clamp(lo, 3)),
        ("clamp float bounds", lambda m, x, lo, c: x.clamp(-0.5, 1.5)),
        ("clamp none", lambda m, x, lo, c: x.clamp()),
        ("clamp_", lambda m, x, lo, c: x.clone().clamp_(-1, 1)),
        ("where", lambda m, x, lo, c: m.where(c, x, lo)),
        ("where number", lambda m, x, lo, c: m.where(c, x, 0)),
        ("where float number", lambda m, x, lo, c: m.where(c, 1.5, x)),
        ("Tensor.where", lambda m, x, lo, c: x.where(c, lo)),
    ], check)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=ids(FLOAT_DTYPES))
def test_lerp_and_nan_to_num(dtype, rng):
    """The ops composed in Python on libTHC match libTH's kernels."""
    ha, ga = pair(rng, SHAPE, dtype, "transposed")
    hb, gb = pair(rng, SHAPE, dtype, "contiguous")
    hw, gw = pair(rng, (7,), dtype, "contiguous", -0.5, 1.5)
    for w in (0.25, 0.75, -1.0):
        assert_same(thc.lerp(ga, gb, w), th.lerp(ha, hb, w), what=f"lerp {w}")
    assert_same(ga.lerp(gb, gw), ha.lerp(hb, hw), what="lerp tensor weight")
    assert_same(ga.clone().lerp_(gb, 0.3), ha.clone().lerp_(hb, 0.3), what="lerp_")
    with pytest.raises(RuntimeError, match="same dtype"):
        ga.lerp(gb.double() if dtype is not th.float64 else gb.float(), 0.5)
    special = [float("nan"), float("inf"), -float("inf"), 1.5, -2.0]
    hs, gs = th.tensor(special).to(dtype), thc.tensor(special).to(dtype)
    assert_same(gs.nan_to_num(), hs.nan_to_num(), what="nan_to_num")
    assert_same(thc.nan_to_num(gs, 1.0, 2.0, -3.0), th.nan_to_num(hs, 1.0, 2.0, -3.0))
    assert_same(gs.clone().nan_to_num_(0.5), hs.clone().nan_to_num_(0.5))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=ids(FLOAT_DTYPES))
def test_special_values(dtype):
    """NaN, infinities and signed zeros through the unary and binary ops."""
    vals = [float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 1.0, -1.0, 0.5]
    h, g = th.tensor(vals).to(dtype), thc.tensor(vals).to(dtype)
    hb, gb = h.flip(0), g.flip(0)

    def check(name):
        if name in _tensor_ops.UNARY_OPS and name not in ("bitwise_not",):
            assert_same_outcome(lambda: getattr(g, name)(), lambda: getattr(h, name)(),
                                what=name)
        if name in BINARY:
            assert_same_outcome(lambda: getattr(g, name)(gb), lambda: getattr(h, name)(hb),
                                what=name)
    each(sorted(set(UNARY) | set(BINARY)), check)


def test_add_bool_with_an_integer_alpha():
    h = th.tensor([True, False])
    assert_same(thc.add(thc.tensor(h), thc.tensor(h), alpha=2), th.add(h, h, alpha=2))
