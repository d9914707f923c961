"""Element-wise math against NumPy: every unary and binary op x dtype x
layout, PyTorch's type promotion, out= and in-place forms, broadcasting,
special values, and the error paths."""
import math
import operator

import numpy as np
import pytest

import ember.th as th
from ember.th import _elementwise

from th_testing import (DTYPES, FLOAT_DTYPES, HALF_DTYPES, INT_DTYPES, LAYOUTS,
                      as_dtype, assert_close, each, ids, new_tensor, to_numpy)

SHAPE = (4, 7)  # 28 elements: vector loops and their tails both run


# ---- NumPy references ----------------------------------------------------
def _vec(f):
    v = np.vectorize(f, otypes=[np.float64])
    return lambda x: v(x) if np.size(x) else np.asarray(x, dtype=np.float64)


def _erfinv_scalar(y):
    if math.isnan(y) or abs(y) > 1:
        return math.nan
    if abs(y) == 1:
        return math.copysign(math.inf, y)
    if y == 0:
        return y
    lo, hi = -6.0, 6.0
    for _ in range(200):  # bisection: exact to the last bit of a double
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if math.erf(mid) < y:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


erf, erfc, erfinv = _vec(math.erf), _vec(math.erfc), _vec(_erfinv_scalar)


def _identity_for_ints(f):
    """floor/ceil/trunc/round keep integers as they are."""
    return lambda x: x.copy() if x.dtype.kind in "iub" else f(x)


# name: (reference, kind, float-input domain, integer-input domain)
#   kind "float": integer and bool inputs give the default float dtype
#   kind "same":  the result keeps the input dtype
#   kind "pred":  the result is bool
POS = (0.05, 10.0)
UNARY = {
    "neg": (np.negative, "same", None, None),
    "abs": (np.abs, "same", None, None),
    "sign": (np.sign, "same", None, None),
    "square": (np.square, "same", None, None),
    "exp": (np.exp, "float", (-5, 5), None),
    "exp2": (np.exp2, "float", (-5, 5), None),
    "expm1": (np.expm1, "float", (-3, 3), None),
    "log": (np.log, "float", POS, (1, 9)),
    "log2": (np.log2, "float", POS, (1, 9)),
    "log10": (np.log10, "float", POS, (1, 9)),
    "log1p": (np.log1p, "float", (-0.9, 5), (0, 9)),
    "sqrt": (np.sqrt, "float", (0, 10), (0, 9)),
    "rsqrt": (lambda x: 1 / np.sqrt(x), "float", POS, (1, 9)),
    "reciprocal": (lambda x: 1 / x, "float", (0.2, 4), (1, 9)),
    "sin": (np.sin, "float", None, None),
    "cos": (np.cos, "float", None, None),
    "tan": (np.tan, "float", (-1.4, 1.4), None),
    "asin": (np.arcsin, "float", (-0.99, 0.99), (-1, 1)),
    "acos": (np.arccos, "float", (-0.99, 0.99), (-1, 1)),
    "atan": (np.arctan, "float", None, None),
    "sinh": (np.sinh, "float", None, None),
    "cosh": (np.cosh, "float", None, None),
    "tanh": (np.tanh, "float", None, None),
    "asinh": (np.arcsinh, "float", None, None),
    "acosh": (np.arccosh, "float", (1.0, 10.0), (1, 9)),
    "atanh": (np.arctanh, "float", (-0.95, 0.95), (0, 0)),
    "sigmoid": (lambda x: 1 / (1 + np.exp(-x)), "float", None, None),
    "erf": (erf, "float", None, None),
    "erfc": (erfc, "float", (-3, 3), None),
    "erfinv": (erfinv, "float", (-0.99, 0.99), (0, 0)),
    "floor": (_identity_for_ints(np.floor), "same", None, None),
    "ceil": (_identity_for_ints(np.ceil), "same", None, None),
    "trunc": (_identity_for_ints(np.trunc), "same", None, None),
    "round": (_identity_for_ints(np.round), "same", None, None),
    "frac": (lambda x: x - np.trunc(x), "same", None, None),
    "isnan": (np.isnan, "pred", None, None),
    "isinf": (np.isinf, "pred", None, None),
    "isfinite": (np.isfinite, "pred", None, None),
    "isposinf": (np.isposinf, "pred", None, None),
    "isneginf": (np.isneginf, "pred", None, None),
    "logical_not": (np.logical_not, "pred", None, None),
    "bitwise_not": (np.invert, "same", None, None),
}

# (op, dtype kind) -> (exception, message part); kinds: "float", "int", "bool"
UNARY_ERRORS = {
    ("neg", "bool"): (RuntimeError,
                      "Negation, the `-` operator, on a bool tensor is not supported"),
    ("bitwise_not", "float"): (TypeError, '"bitwise_not_cpu" not implemented for'),
    ("frac", "int"): (TypeError, "not implemented for"),
    ("frac", "bool"): (TypeError, "not implemented for"),
}
# bool inputs PyTorch rejects (ember accepts them); not part of the contract
UNARY_BOOL_UNDEFINED = {"abs", "floor", "ceil", "trunc", "round"}


def kind_of(d):
    return "bool" if d is th.bool else "float" if d.is_floating_point else "int"


def unary_reference(name, a, d):
    """(expected values, expected dtype) of op `name` on array a of dtype d."""
    f, kind, _, _ = UNARY[name]
    with np.errstate(all="ignore"):
        if kind == "float":
            x = a.astype(np.float64)
            return f(x), d if d.is_floating_point else th.get_default_dtype()
        if kind == "pred":
            return f(a), th.bool
        if d.is_floating_point:
            return f(a.astype(np.float64)), d
        if name == "sign" and d is th.bool:
            return a.copy(), d
        if name == "square" and d is th.bool:  # pow(x, 2): int64, as PyTorch
            return a.astype(np.int64), th.int64
        return f(a), d


def test_table_covers_every_unary_op():
    assert set(_elementwise.UNARY_OPS) | {"round"} == set(UNARY)


@pytest.mark.parametrize("dtype", DTYPES, ids=ids(DTYPES))
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(name, dtype, make):
    """op(t) and t.op() for each layout (contiguous, transposed, sliced,
    broadcast, 0-d, empty) against NumPy, with the result dtype."""
    f, kind, fdom, idom = UNARY[name]
    if dtype is th.bool and name in UNARY_BOOL_UNDEFINED:
        with pytest.raises(TypeError, match="not implemented for 'Bool'"):
            getattr(th, name)(th.tensor([True, False]))
        return
    dom = fdom if dtype.is_floating_point else idom
    low, high = dom if dom else (None, None)
    if dtype is th.bool and name in ("rsqrt", "reciprocal", "log", "log2", "log10"):
        low = 1  # all True: 1/0 is tested among the special values
    fn = getattr(th, name)
    err = UNARY_ERRORS.get((name, kind_of(dtype)))

    def check(layout):
        t, a = make(SHAPE, dtype, layout, low=low, high=high)
        if err:
            with pytest.raises(err[0], match=err[1].replace("(", r"\(").replace(")", r"\)")):
                fn(t)
            return
        before = to_numpy(t)
        expected, rdt = unary_reference(name, a, dtype)
        assert_close(fn(t), expected, rdt)
        assert_close(getattr(t, name)(), expected, rdt)  # the method
        np.testing.assert_array_equal(to_numpy(t), before)  # input untouched
    each(LAYOUTS, check)


@pytest.mark.parametrize("dtype", DTYPES, ids=ids(DTYPES))
@pytest.mark.parametrize("name", sorted(set(UNARY) - {"isnan", "isinf", "isfinite",
                                                      "isposinf", "isneginf"}))
def test_unary_inplace(name, dtype, make):
    f, kind, fdom, idom = UNARY[name]
    if dtype is th.bool and name in UNARY_BOOL_UNDEFINED | {"square"}:
        # undefined for bool, or (square) an int64 result that bool cannot hold
        with pytest.raises((TypeError, RuntimeError)):
            getattr(th.tensor([True, False]), name + "_")()
        return
    dom = fdom if dtype.is_floating_point else idom
    low, high = dom if dom else (None, None)
    # a transposed view of a bigger tensor: the write must go through it
    base, abase = make((7, 9), dtype, "contiguous", low=low, high=high)
    t, a = base.t()[1:5], abase.T[1:5].copy()
    err = UNARY_ERRORS.get((name, kind_of(dtype)))
    expected, rdt = unary_reference(name, a, dtype) if err is None else (None, dtype)
    if err is None and _category(rdt) > _category(dtype):
        err = (RuntimeError, f"result type {_TITLE[rdt]} can't be cast to the desired "
                             f"output type {_TITLE[dtype]}")
    op_ = getattr(t, name + "_")
    if err:
        with pytest.raises(err[0], match=err[1].replace("(", r"\(").replace(")", r"\)")):
            op_()
        np.testing.assert_array_equal(to_numpy(base), as_dtype(abase, dtype))  # intact
        return
    assert op_() is t
    assert_close(t, expected, dtype)
    want_base = abase.copy()
    want_base.T[1:5] = as_dtype(expected, dtype)
    assert_close(base, want_base, dtype)


_TITLE = {th.float32: "Float", th.float64: "Double", th.float16: "Half",
          th.bfloat16: "BFloat16", th.int8: "Char", th.uint8: "Byte", th.int16: "Short",
          th.int32: "Int", th.int64: "Long", th.bool: "Bool"}


@pytest.mark.parametrize("name", ["exp", "sin", "neg", "isnan", "floor"])
def test_unary_out(name, make):
    t, a = make((3, 4), th.float32)
    expected, rdt = unary_reference(name, a, th.float32)
    out = th.empty(3, 4, dtype=th.float64)  # wider out: values are converted
    assert getattr(th, name)(t, out=out) is out
    assert_close(out, expected, th.float64, rtol=1e-5, atol=1e-6)
    wrong = th.empty(4, 3, dtype=rdt)
    with pytest.raises(RuntimeError, match=r"output with shape \[4, 3\] doesn't match"):
        getattr(th, name)(t, out=wrong)


def test_unary_out_cannot_narrow_float_to_int():
    out = th.zeros(3, dtype=th.int64)
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the "
                                           "desired output type Long"):
        th.exp(th.tensor([1, 2, 3]), out=out)
    assert out.tolist() == [0, 0, 0]


def test_unary_ops_follow_default_dtype(float64_default):
    r = th.exp(th.tensor([1, 2]))
    assert r.dtype is th.float64
    assert_close(r, np.exp([1.0, 2.0]), th.float64)


@pytest.fixture
def float64_default():
    old = th.get_default_dtype()
    th.set_default_dtype(th.float64)
    yield
    th.set_default_dtype(old)


def test_round_decimals(make):
    t, a = make((5, 6), th.float64, low=-100, high=100)
    assert_close(th.round(t, decimals=2), np.round(a, 2), th.float64, rtol=1e-12)
    assert_close(th.round(t, decimals=-1), np.round(a, -1), th.float64, rtol=1e-12)
    assert th.round(th.tensor([0.5, 1.5, 2.5, -0.5])).tolist() == [0.0, 2.0, 2.0, -0.0]


def test_square_of_bool_is_int64():
    assert th.square(th.tensor([True, False])).dtype is th.int64


# ---- binary ops ----------------------------------------------------------
def _trunc_div(x, y):
    if x.dtype.kind in "iu":
        q = np.abs(x.astype(np.int64)) // np.abs(y.astype(np.int64))
        return q * np.sign(x.astype(np.int64)) * np.sign(y.astype(np.int64))
    return np.trunc(x / y)


def _float_trunc_div(x, y, cd):
    # libTH divides in the compute dtype, then truncates
    return np.trunc((x / y).astype(cd))


def _bits(d):
    return d.itemsize * 8


# name: (reference, kind, dtypes it accepts, rhs domain, lhs domain)
#   kind "same": the promoted dtype; "float": promoted, then the default float
#   dtype for integers; "bool": comparison results
ALL = set(DTYPES)
NUM = ALL - {th.bool}
INTS_BOOL = set(INT_DTYPES) | {th.bool}
FLOATS = set(FLOAT_DTYPES)
BINARY = {
    "add": (np.add, "same", ALL, {}, {}),
    "sub": (np.subtract, "same", NUM, {}, {}),
    "mul": (np.multiply, "same", ALL, {}, {}),
    "div": (np.true_divide, "float", ALL, {"nonzero": True}, {}),
    "floor_divide": (np.floor_divide, "same", NUM, {"nonzero": True}, {}),
    "remainder": (np.remainder, "same", NUM, {"nonzero": True}, {}),
    "fmod": (np.fmod, "same", NUM, {"nonzero": True}, {}),
    "pow": (np.power, "same", NUM, {"int": (0, 4), "float": (-3, 3)},
            {"float": (0.1, 3)}),
    "atan2": (np.arctan2, "float", ALL, {}, {}),
    "hypot": (np.hypot, "float", FLOATS, {}, {}),
    "copysign": (np.copysign, "float", ALL, {}, {}),
    "ldexp": (lambda a, b: a * np.exp2(b), "float", ALL, {"int": (-4, 4), "float": (-3, 3)}, {}),
    "maximum": (np.maximum, "same", ALL, {"discrete": True}, {"discrete": True}),
    "minimum": (np.minimum, "same", ALL, {"discrete": True}, {"discrete": True}),
    "eq": (np.equal, "bool", ALL, {"discrete": True}, {"discrete": True}),
    "ne": (np.not_equal, "bool", ALL, {"discrete": True}, {"discrete": True}),
    "lt": (np.less, "bool", ALL, {"discrete": True}, {"discrete": True}),
    "le": (np.less_equal, "bool", ALL, {"discrete": True}, {"discrete": True}),
    "gt": (np.greater, "bool", ALL, {"discrete": True}, {"discrete": True}),
    "ge": (np.greater_equal, "bool", ALL, {"discrete": True}, {"discrete": True}),
    "logical_and": (np.logical_and, "bool", ALL, {"discrete": True}, {"discrete": True}),
    "logical_or": (np.logical_or, "bool", ALL, {"discrete": True}, {"discrete": True}),
    "logical_xor": (np.logical_xor, "bool", ALL, {"discrete": True}, {"discrete": True}),
    "bitwise_and": (np.bitwise_and, "same", INTS_BOOL, {}, {}),
    "bitwise_or": (np.bitwise_or, "same", INTS_BOOL, {}, {}),
    "bitwise_xor": (np.bitwise_xor, "same", INTS_BOOL, {}, {}),
    "bitwise_left_shift": (np.left_shift, "same", set(INT_DTYPES), {"shift": True}, {}),
    "bitwise_right_shift": (np.right_shift, "same", set(INT_DTYPES), {"shift": True}, {}),
    "div_trunc": (_trunc_div, "same", NUM, {"nonzero": True}, {}),
    "div_floor": (np.floor_divide, "same", NUM, {"nonzero": True}, {}),
}
BOOL_SAME = {"add": np.logical_or, "mul": np.logical_and, "maximum": np.logical_or,
             "minimum": np.logical_and}


def test_table_covers_every_binary_op():
    assert set(_elementwise.BINARY_OPS) | {"add", "sub", "div"} <= set(BINARY)


def call_binary(name, a, b, **kw):
    if name == "div_trunc":
        return th.div(a, b, rounding_mode="trunc", **kw)
    if name == "div_floor":
        return th.div(a, b, rounding_mode="floor", **kw)
    return getattr(th, name)(a, b, **kw)


def make_operand(make, name, side, shape, d, layout):
    spec = BINARY[name][3 if side == "rhs" else 4]
    kw = {}
    if spec.get("nonzero"):
        kw["nonzero"] = True
    if spec.get("discrete"):
        kw.update(discrete=True, low=-2, high=2)
    if spec.get("shift"):
        kw.update(low=0, high=_bits(d) - 1)
    if d.is_floating_point and "float" in spec:
        kw["low"], kw["high"] = spec["float"]
    if not d.is_floating_point and d is not th.bool and "int" in spec:
        kw["low"], kw["high"] = spec["int"]
    return make(shape, d, layout, **kw)


def binary_reference(name, a, da, b, db, rt):
    """Expected values of op on arrays a (dtype da) and b (dtype db); rt is
    the expected result dtype (computed independently, see promote())."""
    f, kind, _, _, _ = BINARY[name]
    ct = promote_pair(da, db, a.ndim == 0, b.ndim == 0)
    with np.errstate(all="ignore"):
        if kind == "float" and not ct.is_floating_point:
            ct = th.get_default_dtype()
        if ct.is_floating_point:
            # operands are converted to the compute dtype (float32 for the
            # half types, whose results are rounded at the end), as PyTorch
            # keeps a float64 0-d operand at float ("opmath") precision
            cdt = th.float32 if ct in HALF_DTYPES else ct
            x = as_dtype(a, cdt).astype(np.float64)
            y = as_dtype(b, cdt).astype(np.float64)
            if name == "div_trunc":
                cd = np.float64 if ct is th.float64 else np.float32
                return _float_trunc_div(x, y, cd)
            return f(x, y)
        if ct is th.bool:
            x, y = a.astype(bool), b.astype(bool)
            return BOOL_SAME.get(name, f)(x, y)
        x, y = a.astype(ct.numpy), b.astype(ct.numpy)
        return f(x, y)


# ---- PyTorch's promotion rules, written out independently --------------
_FLOAT_RANK = {th.float16: 1, th.bfloat16: 1, th.float32: 2, th.float64: 3}


def promote_types(a, b):
    if a is b:
        return a
    if a is th.bool:
        return b
    if b is th.bool:
        return a
    fa, fb = a.is_floating_point, b.is_floating_point
    if fa and fb:
        if _FLOAT_RANK[a] == _FLOAT_RANK[b] == 1:
            return th.float32  # float16 with bfloat16
        return a if _FLOAT_RANK[a] > _FLOAT_RANK[b] else b
    if fa or fb:
        return a if fa else b
    if th.uint8 in (a, b):
        other = b if a is th.uint8 else a
        return th.int16 if other is th.int8 else other
    return a if a.itemsize > b.itemsize else b


def _category(d):
    return 0 if d is th.bool else 2 if d.is_floating_point else 1


def promote_pair(da, db, a0d=False, b0d=False):
    """result_type of two tensors: a 0-d operand raises the category
    (bool < integer < floating) of a dimensioned one, never its width."""
    if a0d == b0d:
        return promote_types(da, db)
    dim, zero = (db, da) if a0d else (da, db)
    if _category(zero) > _category(dim):
        return promote_types(dim, zero)
    return dim


def result_dtype(name, da, db, a0d=False, b0d=False):
    kind = BINARY[name][1]
    if kind == "bool":
        return th.bool
    rt = promote_pair(da, db, a0d, b0d)
    if kind == "float" and not rt.is_floating_point:
        return th.get_default_dtype()
    return rt


def test_promote_types_matches_rules():
    for a in DTYPES:
        for b in DTYPES:
            assert th.promote_types(a, b) is promote_types(a, b), (a, b)


def expected_binary_error(name, rt):
    """The error for op on operands whose promoted dtype is rt, or None."""
    accepts = BINARY[name][2]
    if rt in accepts:
        return None
    if name == "sub" and rt is th.bool:
        return RuntimeError, "Subtraction, the `-` operator, with two bool tensors"
    return TypeError, "not implemented for"


@pytest.mark.parametrize("dtype", DTYPES, ids=ids(DTYPES))
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary(name, dtype, make):
    """op(x, y) with both operands in each layout, against NumPy."""
    if name == "hypot" and not dtype.is_floating_point:
        with pytest.raises(TypeError, match="hypot_cpu\" not implemented"):
            th.hypot(th.ones(2, dtype=dtype), th.ones(2, dtype=dtype))
        return
    err = expected_binary_error(name, dtype)
    rt = result_dtype(name, dtype, dtype)

    def check(layout):
        x, a = make_operand(make, name, "lhs", SHAPE, dtype, layout)
        y, b = make_operand(make, name, "rhs", SHAPE, dtype, layout)
        if err:
            with pytest.raises(err[0], match=err[1]):
                call_binary(name, x, y)
            return
        expected = binary_reference(name, a, dtype, b, dtype, rt)
        before_x, before_y = to_numpy(x), to_numpy(y)
        assert_close(call_binary(name, x, y), expected, rt)
        np.testing.assert_array_equal(to_numpy(x), before_x)
        np.testing.assert_array_equal(to_numpy(y), before_y)
    each(LAYOUTS, check)


def call_binary_(name, a, b):
    if name == "div_trunc":
        return a.div_(b, rounding_mode="trunc")
    if name == "div_floor":
        return a.div_(b, rounding_mode="floor")
    return getattr(a, name + "_")(b)


@pytest.mark.parametrize("dtype", DTYPES, ids=ids(DTYPES))
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_inplace(name, dtype, make):
    """x.op_(y) on a transposed view of a bigger tensor: the result is
    converted to x's dtype, or refused when it would narrow the category."""
    if name == "hypot" and not dtype.is_floating_point:
        with pytest.raises(TypeError, match="hypot_cpu\" not implemented"):
            th.ones(2, dtype=dtype).hypot_(th.ones(2, dtype=dtype))
        return
    base, abase = make_operand(make, name, "lhs", (8, 5), dtype, "contiguous")
    x, a = base.t()[:, 1:7], abase.T[:, 1:7].copy()
    y, b = make_operand(make, name, "rhs", (6,), dtype, "contiguous")
    err = expected_binary_error(name, dtype)
    rt = result_dtype(name, dtype, dtype)
    if err is None and _category(rt) > _category(dtype):
        err = (RuntimeError, f"result type {_TITLE[rt]} can't be cast to the desired "
                             f"output type {_TITLE[dtype]}")
    if err:
        with pytest.raises(err[0], match=err[1]):
            call_binary_(name, x, y)
        np.testing.assert_array_equal(to_numpy(base), abase)  # nothing written
        return
    expected = binary_reference(name, a, dtype, b, dtype, rt)
    assert call_binary_(name, x, y) is x
    assert_close(x, as_dtype(expected, rt), dtype)
    want = abase.copy()
    want.T[:, 1:7] = to_numpy(x)
    assert_close(base, want, dtype)


# dtype pairs: every pair for a few ops, both dimensioned and with a 0-d side
PAIR_OPS = ["add", "mul", "div", "maximum", "lt", "floor_divide", "bitwise_and"]


@pytest.mark.parametrize("db", DTYPES, ids=ids(DTYPES))
@pytest.mark.parametrize("da", DTYPES, ids=ids(DTYPES))
def test_binary_promotion(da, db, make):
    """Every dtype pair, dimensioned or 0-d on either side: result dtype and
    values of a few ops."""
    each([(n, z) for z in ("none", "rhs", "lhs", "both") for n in PAIR_OPS],
         lambda case: _check_pair(make, da, db, *case))


def _check_pair(make, da, db, name, zero_d):
    sa = () if zero_d in ("lhs", "both") else (2, 3)
    sb = () if zero_d in ("rhs", "both") else (2, 3)
    x, a = make_operand(make, name, "lhs", sa, da, "contiguous")
    y, b = make_operand(make, name, "rhs", sb, db, "contiguous")
    rt = result_dtype(name, da, db, not sa, not sb)
    pt = promote_pair(da, db, not sa, not sb)
    err = expected_binary_error(name, pt)
    if err:
        with pytest.raises(err[0], match=err[1]):
            call_binary(name, x, y)
        return
    expected = binary_reference(name, a, da, b, db, rt)
    assert_close(call_binary(name, x, y), expected, rt)


@pytest.mark.parametrize("da,db,want", [
    (th.uint8, th.int8, th.int16),
    (th.int8, th.uint8, th.int16),
    (th.uint8, th.int32, th.int32),
    (th.bool, th.int32, th.int32),
    (th.int16, th.int32, th.int32),
    (th.int32, th.float16, th.float16),
    (th.int64, th.bfloat16, th.bfloat16),
    (th.float16, th.bfloat16, th.float32),
    (th.bfloat16, th.float64, th.float64),
    (th.bool, th.bool, th.bool),
])
def test_named_promotions(da, db, want):
    a = th.ones(2, dtype=da)
    b = th.ones(2, dtype=db)
    assert (a + b).dtype is want
    assert (b * a).dtype is want


@pytest.mark.parametrize("d,scalar,want", [
    (th.int32, 2.5, th.float32),      # int tensor + Python float -> default float
    (th.int64, 1.0, th.float32),
    (th.uint8, 2.5, th.float32),
    (th.bool, 2.5, th.float32),
    (th.bool, 3, th.int64),           # bool + Python int -> int64
    (th.bool, True, th.bool),
    (th.uint8, 300, th.uint8),        # a Python int never widens an int tensor
    (th.int8, 7, th.int8),
    (th.int16, True, th.int16),
    (th.float16, 2.5, th.float16),    # nor a Python float a float tensor
    (th.bfloat16, 7, th.bfloat16),
    (th.float64, 2, th.float64),
])
def test_python_scalar_promotion(d, scalar, want):
    t = th.ones(3, dtype=d)
    assert (t + scalar).dtype is want
    assert (scalar + t).dtype is want
    assert th.add(t, scalar).dtype is want


def test_python_float_follows_default_dtype(float64_default):
    assert (th.tensor([1, 2]) + 0.5).dtype is th.float64
    assert (th.tensor([1, 2], dtype=th.float32) + 0.5).dtype is th.float32
    assert (th.tensor([1, 2]) / 2).dtype is th.float64


@pytest.mark.parametrize("dim_dtype,zero_dtype,want", [
    (th.int8, th.int64, th.int8),        # same category: the width stays
    (th.uint8, th.int16, th.uint8),
    (th.float16, th.float64, th.float16),
    (th.float32, th.float64, th.float32),
    (th.bool, th.int32, th.int32),       # higher category: promoted
    (th.int32, th.float64, th.float64),
    (th.int8, th.float16, th.float16),
    (th.bool, th.float64, th.float64),
])
def test_zero_dim_tensor_promotion(dim_dtype, zero_dtype, want):
    a = th.ones(3, dtype=dim_dtype)
    z = th.tensor(2, dtype=zero_dtype)
    assert (a + z).dtype is want
    assert (z + a).dtype is want
    assert (z + z).dtype is zero_dtype  # two 0-d: ordinary promotion
    assert (th.ones((), dtype=dim_dtype) + z).dtype is promote_types(dim_dtype, zero_dtype)


def test_scalar_values_are_exact_in_the_tensor_dtype():
    big = 2 ** 53 + 1
    assert (th.tensor([0]) + big).item() == big  # an int64 scalar is not a double
    assert (th.tensor([1], dtype=th.uint8) + 255).tolist() == [0]  # wraps like uint8
    assert (th.tensor([100], dtype=th.int8) * 2).tolist() == [-56]


@pytest.mark.parametrize("name", sorted(set(BINARY) - {"div_trunc", "div_floor"}))
def test_binary_with_python_scalars(name, make):
    """op(tensor, number) and op(number, tensor) treat the number as a 0-d
    tensor of int64 (int) or the default float dtype (float)."""
    integer_op = "bitwise" in name
    d = th.int32 if integer_op else th.float64
    x, a = make_operand(make, name, "lhs", (3, 4), d, "contiguous")
    s, sd = (3, th.int64) if integer_op else (1.5, th.float32)
    if name in ("eq", "ne", "lt", "le", "gt", "ge", "maximum", "minimum"):
        s = 1.0
    if name == "pow":
        s = 2.0
    b = np.array(s, dtype=sd.numpy)
    rt = result_dtype(name, d, sd, False, True)
    assert_close(call_binary(name, x, s), binary_reference(name, a, d, b, sd, rt), rt)
    if "shift" not in name:
        assert_close(call_binary(name, s, x), binary_reference(name, b, sd, a, d, rt), rt)


def _ops():
    return [
        (operator.add, np.add), (operator.sub, np.subtract), (operator.mul, np.multiply),
        (operator.truediv, np.true_divide), (operator.floordiv, np.floor_divide),
        (operator.mod, np.remainder), (operator.pow, np.power),
        (operator.eq, np.equal), (operator.ne, np.not_equal), (operator.lt, np.less),
        (operator.le, np.less_equal), (operator.gt, np.greater),
        (operator.ge, np.greater_equal),
    ]


@pytest.mark.parametrize("op,ref", _ops(), ids=lambda o: getattr(o, "__name__", ""))
def test_operators_float(op, ref, make):
    discrete = op in (operator.eq, operator.ne, operator.le, operator.ge)
    x, a = make((3, 4), th.float64, low=0.5, high=3, discrete=discrete)
    y, b = make((4,), th.float64, low=0.5, high=3, discrete=discrete)
    rt = th.bool if op in (operator.eq, operator.ne, operator.lt, operator.le, operator.gt,
                           operator.ge) else th.float64
    with np.errstate(all="ignore"):
        assert_close(op(x, y), ref(a, b), rt)
        assert_close(op(x, 2.0), ref(a, 2.0), rt)
        assert_close(op(2.0, x), ref(2.0, a), rt)
        assert_close(op(x, y[0]), ref(a, b[0]), rt)  # with a 0-d tensor


@pytest.mark.parametrize("op,ref", [
    (operator.and_, np.bitwise_and), (operator.or_, np.bitwise_or),
    (operator.xor, np.bitwise_xor), (operator.lshift, np.left_shift),
    (operator.rshift, np.right_shift), (operator.floordiv, np.floor_divide),
    (operator.mod, np.remainder), (operator.add, np.add), (operator.sub, np.subtract),
    (operator.mul, np.multiply), (operator.pow, np.power),
], ids=lambda o: getattr(o, "__name__", ""))
def test_operators_int(op, ref, make):
    x, a = make((3, 4), th.int64, nonzero=True)
    y, b = make((3, 4), th.int64, low=1, high=5)
    assert_close(op(x, y), ref(a, b), th.int64)
    assert_close(op(x, 3), ref(a, 3), th.int64)
    assert_close(op(3, y), ref(3, b), th.int64)


def test_unary_operators(make):
    x, a = make((3, 4), th.float32)
    assert_close(-x, -a, th.float32)
    assert_close(abs(x), np.abs(a), th.float32)
    assert +x is x
    i, ai = make((3, 4), th.int32)
    assert_close(~i, ~ai, th.int32)
    m, am = make((5,), th.bool)
    assert_close(~m, ~am, th.bool)
    with pytest.raises(TypeError, match="bitwise_not"):
        ~x
    with pytest.raises(RuntimeError, match="Negation, the `-` operator, on a bool tensor"):
        -m


@pytest.mark.parametrize("op,ref", [
    (operator.iadd, np.add), (operator.isub, np.subtract), (operator.imul, np.multiply),
    (operator.itruediv, np.true_divide), (operator.ifloordiv, np.floor_divide),
    (operator.imod, np.remainder), (operator.ipow, np.power),
], ids=lambda o: o.__name__)
def test_inplace_operators(op, ref, make):
    x, a = make((3, 4), th.float64, low=0.5, high=3)
    y, b = make((4,), th.float64, low=0.5, high=3)
    same = x
    x = op(x, y)
    assert x is same  # in place, same object
    assert_close(x, ref(a, b), th.float64)


def test_inplace_integer_operators(make):
    x, a = make((3, 4), th.int32)
    p = x.data_ptr()
    x += 3
    x *= 2
    x -= th.tensor([1, 2, 3, 4], dtype=th.int8)
    x &= 0x7
    x |= 8
    x ^= 1
    x <<= 2
    x >>= 1
    assert x.data_ptr() == p
    want = ((((((a + 3) * 2 - np.array([1, 2, 3, 4])) & 7) | 8) ^ 1) << 2) >> 1
    assert_close(x, want, th.int32)


# ---- add/sub with alpha, div rounding modes -----------------------------
@pytest.mark.parametrize("dtype", DTYPES, ids=ids(DTYPES))
def test_add_sub_alpha(dtype, make):
    each(LAYOUTS, lambda layout: _check_alpha(dtype, layout, make))


def _check_alpha(dtype, layout, make):
    x, a = make((3, 5), dtype, layout)
    y, b = make((3, 5), dtype, layout)
    alpha = 3 if not dtype.is_floating_point else 0.25
    if dtype is th.bool:
        # bool: alpha=True is the plain add (a logical or); sub is refused
        assert_close(th.add(x, y, alpha=True), a | b, th.bool)
        with pytest.raises(RuntimeError, match="Subtraction, the `-` operator"):
            th.sub(x, y, alpha=2)
        return
    wide = np.float64 if dtype.is_floating_point else np.int64
    aw, bw = a.astype(wide), b.astype(wide)
    assert_close(th.add(x, y, alpha=alpha), aw + alpha * bw, dtype)
    assert_close(th.sub(x, y, alpha=alpha), aw - alpha * bw, dtype)
    assert_close(x.add(y, alpha=alpha), aw + alpha * bw, dtype)
    assert_close(x.sub(y, alpha=alpha), aw - alpha * bw, dtype)
    out = th.empty(*x.shape, dtype=dtype)
    assert th.add(x, y, alpha=alpha, out=out) is out
    assert_close(out, aw + alpha * bw, dtype)
    z = x.clone()
    assert z.sub_(y, alpha=alpha) is z
    assert_close(z, aw - alpha * bw, dtype)
    assert_close(th.rsub(x, y, alpha=alpha), bw - alpha * aw, dtype)


def test_alpha_errors():
    with pytest.raises(RuntimeError, match="For integral input tensors, argument alpha "
                                           "must not be a floating point number"):
        th.add(th.tensor([1, 2]), th.tensor([1, 2]), alpha=0.5)
    t = th.tensor([1.0, 2.0])
    assert th.add(t, th.tensor([1, 2]), alpha=2).tolist() == [3.0, 6.0]


@pytest.mark.parametrize("mode", [None, "trunc", "floor"])
@pytest.mark.parametrize("dtype", [th.float32, th.float64, th.int32, th.int64, th.int8,
                                   th.float16], ids=lambda d: d.name)
def test_div_rounding_modes_signs(mode, dtype):
    a = np.array([7, -7, 7, -7, 6, -6, 0, 5], dtype=np.float64)
    b = np.array([2, 2, -2, -2, 3, 3, 3, -5], dtype=np.float64)
    x, y = new_tensor(np.asarray(a), dtype), new_tensor(np.asarray(b), dtype)
    r = th.div(x, y, rounding_mode=mode)
    if mode is None:
        assert_close(r, a / b, dtype if dtype.is_floating_point else th.float32)
    elif mode == "trunc":
        assert_close(r, np.trunc(a / b), dtype)
    else:
        assert_close(r, np.floor_divide(a, b), dtype)


def test_div_rounding_mode_error():
    with pytest.raises(ValueError, match="div expected rounding_mode to be one of None, "
                                         "'trunc', or 'floor' but found 'round'"):
        th.div(th.ones(2), th.ones(2), rounding_mode="round")


def test_integer_floor_remainder_fmod_signs():
    a = np.array([7, -7, 7, -7, 0, 1, -1], dtype=np.int64)
    b = np.array([3, 3, -3, -3, 5, -5, 5], dtype=np.int64)
    x, y = th.tensor(a), th.tensor(b)
    assert (x // y).tolist() == np.floor_divide(a, b).tolist()
    assert (x % y).tolist() == np.remainder(a, b).tolist()
    assert th.fmod(x, y).tolist() == np.fmod(a, b).tolist()
    assert th.remainder(x, y).tolist() == np.remainder(a, b).tolist()


def test_float_floor_remainder_fmod_signs():
    a = np.array([7.5, -7.5, 7.5, -7.5, 0.0, 1.0, -1.0, 5.0], dtype=np.float64)
    b = np.array([2.0, 2.0, -2.0, -2.0, 5.0, -5.0, 5.0, 0.5], dtype=np.float64)
    x, y = th.tensor(a, dtype=th.float64), th.tensor(b, dtype=th.float64)
    assert_close(x // y, np.floor_divide(a, b), th.float64)
    assert_close(x % y, np.remainder(a, b), th.float64)
    assert_close(th.fmod(x, y), np.fmod(a, b), th.float64)


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=ids(INT_DTYPES))
@pytest.mark.parametrize("fn", [
    lambda a, b: a // b, lambda a, b: a % b, lambda a, b: th.fmod(a, b),
    lambda a, b: th.div(a, b, rounding_mode="trunc"),
    lambda a, b: th.div(a, b, rounding_mode="floor"),
    lambda a, b: th.remainder(a, b), lambda a, b: th.floor_divide(a, 0),
], ids=["floordiv", "mod", "fmod", "trunc", "floor", "remainder", "scalar0"])
def test_integer_division_by_zero(fn, dtype):
    x = new_tensor(np.asarray([4, 5, 6]), dtype)
    y = new_tensor(np.asarray([1, 0, 2]), dtype)
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        fn(x, y)


def test_integer_division_by_zero_leaves_inplace_target_intact():
    x = th.tensor([4, 5, 6])
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        x //= th.tensor([1, 0, 2])
    assert x.tolist() == [4, 5, 6]
    out = th.full((3,), 9)
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        th.remainder(th.tensor([4, 5, 6]), 0, out=out)
    assert out.tolist() == [9, 9, 9]


def test_true_division_of_integers_by_zero_is_float():
    r = th.tensor([1, -1, 0]) / th.tensor([0, 0, 0])
    assert r.dtype is th.float32
    v = to_numpy(r)
    assert v[0] == np.inf and v[1] == -np.inf and np.isnan(v[2])


def test_integer_negative_power_error():
    with pytest.raises(RuntimeError, match="Integers to negative integer powers are not allowed"):
        th.tensor([2, 3]) ** -1
    assert (th.tensor([2, 3]) ** 2).tolist() == [4, 9]
    assert (th.tensor([2, 3]) ** 0.5).dtype is th.float32
    # the exponent's own value counts, not its wrap in the base's dtype
    for dt in (th.uint8, th.int8, th.int16):
        with pytest.raises(RuntimeError, match="negative integer powers"):
            th.tensor([3, 4], dtype=dt) ** -2
        with pytest.raises(RuntimeError, match="negative integer powers"):
            th.pow(th.tensor([3, 4], dtype=dt), th.tensor([-1, 2]))
    assert (th.tensor([3, 4], dtype=th.uint8) ** 2).tolist() == [9, 16]


def test_shift_by_bit_width_or_more():
    x = th.tensor([1, -8, 3], dtype=th.int32)
    assert (x << 40).tolist() == [0, 0, 0]
    assert (x >> 40).tolist() == [0, -1, 0]
    assert (x << 31).tolist() == [-(2 ** 31), 0, -(2 ** 31)]
    assert (th.tensor([255], dtype=th.uint8) >> 3).tolist() == [31]


def test_integer_overflow_wraps_like_numpy():
    a = np.array([120, -120, 100], dtype=np.int8)
    x = th.tensor(a)
    with np.errstate(all="ignore"):
        assert (x + x).tolist() == (a + a).tolist()
        assert (x * 3).tolist() == (a * np.int8(3)).tolist()
    big = th.tensor([2 ** 62], dtype=th.int64)
    assert (big * 4).tolist() == [0]


# ---- out= ----------------------------------------------------------------
@pytest.mark.parametrize("name", ["add", "mul", "div", "maximum", "eq", "atan2",
                                  "bitwise_and", "remainder"])
def test_binary_out(name, make):
    d = th.int32 if name == "bitwise_and" else th.float32
    x, a = make_operand(make, name, "lhs", (3, 4), d, "contiguous")
    y, b = make_operand(make, name, "rhs", (4,), d, "contiguous")
    rt = result_dtype(name, d, d)
    exp = binary_reference(name, a, d, b, d, rt)
    out = th.empty(3, 4, dtype=rt)
    assert call_binary(name, x, y, out=out) is out
    assert_close(out, exp, rt)
    # a non-contiguous out: a transposed view of a bigger buffer
    buf = th.zeros(6, 3, dtype=rt)
    view = buf.t()[:, 1:5]
    assert call_binary(name, x, y, out=view) is view
    assert_close(view, exp, rt)
    assert to_numpy(buf)[0].tolist() == [0, 0, 0]  # rows outside the view untouched
    # a wider out dtype takes the converted values
    out64 = th.empty(3, 4, dtype=th.float64)
    call_binary(name, x, y, out=out64)
    assert_close(out64, exp.astype(np.float64), th.float64, rtol=1e-5, atol=1e-6)


def test_out_type_errors():
    out = th.zeros(3, dtype=th.int64)
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the "
                                           "desired output type Long"):
        th.add(th.tensor([1, 2, 3]), 1.5, out=out)
    assert out.tolist() == [0, 0, 0]
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the "
                                           "desired output type Long"):
        th.div(th.tensor([1, 2, 3]), th.tensor([1, 2, 3]), out=out)
    with pytest.raises(RuntimeError, match="result type Long can't be cast to the "
                                           "desired output type Bool"):
        th.add(th.tensor([1, 2, 3]), 1, out=th.zeros(3, dtype=th.bool))
    # bool results may go into any dtype; integer results into floats
    o = th.zeros(3, dtype=th.float32)
    th.lt(th.tensor([1, 2, 3]), 2, out=o)
    assert o.tolist() == [1.0, 0.0, 0.0]
    th.add(th.tensor([1, 2, 3]), 1, out=o)
    assert o.tolist() == [2.0, 3.0, 4.0]


def test_inplace_type_errors():
    t = th.tensor([1, 2, 3])
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the "
                                           "desired output type Long"):
        t += 1.5
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the "
                                           "desired output type Long"):
        t.mul_(th.tensor([0.5]))
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the "
                                           "desired output type Int"):
        th.tensor([1], dtype=th.int32).div_(2)
    assert t.tolist() == [1, 2, 3]
    f = th.tensor([1.0, 2.0])
    f += th.tensor([1, 2])  # an integer operand into a float tensor is fine
    assert f.tolist() == [2.0, 4.0]


def test_out_shape_errors():
    out = th.zeros(2)
    with pytest.raises(RuntimeError, match=r"output with shape \[2\] doesn't match the "
                                           r"broadcast shape \[3\]"):
        th.add(th.ones(3), th.ones(3), out=out)
    t = th.ones(3, 1)
    with pytest.raises(RuntimeError, match=r"output with shape \[3, 1\] doesn't match the "
                                           r"broadcast shape \[3, 4\]"):
        t.add_(th.ones(3, 4))
    assert t.tolist() == [[1.0], [1.0], [1.0]]


def test_inplace_broadcast_from_smaller_operand(make):
    x, a = make((3, 4), th.float64)
    y, b = make((4,), th.float64)
    x.mul_(y)
    assert_close(x, a * b)
    x.add_(2.0)
    assert_close(x, a * b + 2.0)


def test_out_aliasing_an_input(make):
    """out= overlapping an input in another layout still gives the right values."""
    x, a = make((4, 4), th.float64)
    th.add(x, x.t(), out=x)  # x = x + x.T: reads what it overwrites
    assert_close(x, a + a.T)
    y, b = make((6,), th.float64)
    th.mul(y[1:], 2.0, out=y[:-1])
    want = b.copy()
    want[:-1] = b[1:] * 2
    assert_close(y, want)


# ---- broadcasting ----------------------------------------------------------
@pytest.mark.parametrize("sa,sb", [
    ((3, 1, 5), (4, 1)), ((5,), (2, 3, 5)), ((1,), (2, 3)), ((), (2, 3)),
    ((2, 0), (1,)), ((0, 3), (1, 3)), ((4, 1), (1, 6)), ((1, 1, 1), (2,)),
])
def test_broadcasting_shapes(sa, sb, make):
    x, a = make(sa, th.float32)
    y, b = make(sb, th.float32)
    want = np.broadcast_shapes(sa, sb)
    assert_close(x + y, a + b, th.float32, shape=want)
    assert_close(th.maximum(y, x), np.maximum(b, a), th.float32, shape=want)
    assert_close(x < y, a < b, th.bool, shape=want)


@pytest.mark.parametrize("sa,sb,msg", [
    ((3,), (4,), r"The size of tensor a \(3\) must match the size of tensor b \(4\) "
                 r"at non-singleton dimension 0"),
    ((2, 3), (3, 2), r"must match the size of tensor b \(2\) at non-singleton dimension 1"),
    ((5, 2, 4), (3, 4), "must match the size"),
    ((0,), (2,), "must match the size"),
])
def test_broadcasting_errors(sa, sb, msg):
    a, b = th.ones(sa), th.ones(sb)
    with pytest.raises(RuntimeError, match=msg):
        a + b
    with pytest.raises(RuntimeError, match="must match the size"):
        th.mul(a, b, out=th.empty(sa))
    with pytest.raises(RuntimeError, match="must match the size"):
        th.where(th.ones(sa, dtype=th.bool), a, b)
    with pytest.raises(RuntimeError, match="must match the size"):
        th.clamp(a, min=b)
    with pytest.raises(RuntimeError, match="must match the size"):
        th.lerp(a, b, 0.5)
    with pytest.raises(RuntimeError, match="must match the size"):
        a.add_(b)


def test_unsupported_operand_types():
    t = th.ones(2)
    with pytest.raises(TypeError):
        t + "a"
    with pytest.raises(TypeError):
        t + [1, 2]
    assert (t + 1j).dtype is th.complex64  # a complex number makes the result complex
    with pytest.raises(TypeError, match="ComplexFloat"):
        t < 1j
    with pytest.raises(RuntimeError, match="Overflow"):
        th.ones(2, dtype=th.int64) + 2 ** 70


# ---- clamp, lerp, where, nan_to_num ---------------------------------------
@pytest.mark.parametrize("dtype", sorted(set(DTYPES) - {th.bool}, key=DTYPES.index),
                         ids=lambda d: d.name)
def test_clamp(dtype, make):
    each(LAYOUTS, lambda layout: _check_clamp(dtype, layout, make))


def _check_clamp(dtype, layout, make):
    x, a = make(SHAPE, dtype, layout)
    lo, hi = (-1, 2) if not dtype.is_floating_point else (-1.5, 2.25)
    if dtype is th.uint8:
        lo = 1
    wide = a.astype(np.float64)
    if layout == "0d":  # bounds of the same dtype: a Python number would widen a
        # 0-d tensor (see test_zero_dim_tensor_with_python_scalar_keeps_dtype)
        lo, hi = new_tensor(np.asarray(lo), dtype), new_tensor(np.asarray(hi), dtype)
        wlo, whi = float(lo.item()), float(hi.item())
    else:
        wlo, whi = lo, hi
    assert_close(th.clamp(x, lo, hi), np.clip(wide, wlo, whi), dtype)
    assert_close(th.clamp(x, min=lo), np.maximum(wide, wlo), dtype)
    assert_close(th.clamp(x, max=hi), np.minimum(wide, whi), dtype)
    assert_close(x.clamp(lo, hi), np.clip(wide, wlo, whi), dtype)
    assert_close(th.clip(x, lo, hi), np.clip(wide, wlo, whi), dtype)
    assert_close(th.clamp_min(x, lo), np.maximum(wide, wlo), dtype)
    assert_close(th.clamp_max(x, hi), np.minimum(wide, whi), dtype)
    y = x.clone()
    assert y.clamp_(lo, hi) is y
    assert_close(y, np.clip(wide, wlo, whi), dtype)


def test_clamp_tensor_bounds_and_promotion(make):
    x, a = make((3, 4), th.float64)
    lo, alo = make((4,), th.float64, low=-2, high=0)
    hi, ahi = make((3, 1), th.float64, low=0, high=2)
    assert_close(th.clamp(x, lo, hi), np.minimum(np.maximum(a, alo), ahi), th.float64)
    i = th.tensor([-3, 0, 3])
    r = th.clamp(i, -1.5, 1.5)
    assert r.dtype is th.float32  # a float bound promotes like a Python scalar
    assert r.tolist() == [-1.5, 0.0, 1.5]
    assert th.clamp(i, -1, 1).dtype is th.int64
    assert th.clamp(th.tensor([1.0, 5.0]), 2, 3).tolist() == [2.0, 3.0]
    # min > max: everything becomes max, as in PyTorch
    assert th.clamp(th.tensor([0.0, 10.0]), 5, 1).tolist() == [1.0, 1.0]
    n = to_numpy(th.clamp(th.tensor([float("nan"), 1.0]), 0, 0.5))
    assert np.isnan(n[0]) and n[1] == 0.5


def test_clamp_errors():
    with pytest.raises(RuntimeError, match="At least one of 'min' or 'max' must not be None"):
        th.clamp(th.ones(2))
    out = th.zeros(2, dtype=th.int64)
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired "
                                           "output type Long"):
        th.clamp(th.tensor([1, 2]), 0.5, 1.5, out=out)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=ids(FLOAT_DTYPES))
def test_lerp(dtype, make):
    each(LAYOUTS, lambda layout: _check_lerp(dtype, layout, make))


def _check_lerp(dtype, layout, make):
    x, a = make(SHAPE, dtype, layout)
    y, b = make(SHAPE, dtype, layout)
    w, c = make(SHAPE, dtype, layout, low=0, high=1)
    a64, b64, c64 = a.astype(np.float64), b.astype(np.float64), c.astype(np.float64)
    tol = dict(rtol=1e-4, atol=1e-5) if dtype is th.float32 else {}
    # weights exact in every float dtype (see test_lerp_scalar_weight_precision)
    assert_close(th.lerp(x, y, 0.25), a64 + 0.25 * (b64 - a64), dtype, **tol)
    assert_close(th.lerp(x, y, 0.75), a64 + 0.75 * (b64 - a64), dtype, **tol)
    assert_close(th.lerp(x, y, w), a64 + c64 * (b64 - a64), dtype, **tol)
    z = x.clone()
    assert z.lerp_(y, 0.5) is z
    assert_close(z, a64 + 0.5 * (b64 - a64), dtype, **tol)
    # exact at both ends
    assert_close(th.lerp(x, y, 0.0), a, dtype, rtol=0, atol=0)
    assert_close(th.lerp(x, y, 1.0), b, dtype, rtol=0, atol=0)


def test_lerp_errors():
    with pytest.raises(RuntimeError, match="lerp: expected floating tensors"):
        th.lerp(th.tensor([1, 2]), th.tensor([3, 4]), 0.5)
    with pytest.raises(RuntimeError, match="lerp: expected floating tensors of the same dtype"):
        th.lerp(th.ones(2), th.ones(2, dtype=th.float64), 0.5)


@pytest.mark.parametrize("dtype", DTYPES, ids=ids(DTYPES))
def test_where(dtype, make):
    each(LAYOUTS, lambda layout: _check_where(dtype, layout, make))


def _check_where(dtype, layout, make):
    c, ac = make(SHAPE, th.bool, layout)
    x, a = make(SHAPE, dtype, layout)
    y, b = make(SHAPE, dtype, layout)
    assert_close(th.where(c, x, y), np.where(ac, a, b), dtype)
    assert_close(x.where(c, y), np.where(ac, a, b), dtype)
    out = th.empty(*x.shape, dtype=dtype)
    assert th.where(c, x, y, out=out) is out
    assert_close(out, np.where(ac, a, b), dtype)


def test_where_scalars_broadcasting_and_promotion(make):
    c, ac = make((3, 1), th.bool)
    x, a = make((4,), th.int32)
    r = th.where(c, x, 2.5)  # int tensor with a Python float -> float32
    assert_close(r, np.where(ac, a, 2.5), th.float32)
    assert th.where(c, x, 2).dtype is th.int32
    assert th.where(c, x, th.ones(4, dtype=th.int64)).dtype is th.int64
    assert th.where(c, 1.0, 0.0).dtype is th.float32
    r = th.where(c, x, th.ones((), dtype=th.float64))
    assert r.dtype is th.float64 and tuple(r.shape) == (3, 4)


def test_where_condition_must_be_bool():
    with pytest.raises(RuntimeError, match="where expected condition to be a boolean tensor"):
        th.where(th.ones(3), th.ones(3), th.zeros(3))
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired "
                                           "output type Long"):
        th.where(th.ones(3, dtype=th.bool), th.ones(3), th.zeros(3),
                 out=th.zeros(3, dtype=th.int64))


_SPECIAL = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.5, -2.5, 1e30, -1e30])


_FINITE_MAX = {th.float32: float(np.finfo(np.float32).max),
               th.float64: float(np.finfo(np.float64).max),
               th.float16: 65504.0, th.bfloat16: 3.3895313892515355e38}


@pytest.mark.parametrize("dtype", DTYPES, ids=ids(DTYPES))
def test_nan_to_num(dtype, make):
    if dtype.is_floating_point:
        vals = _SPECIAL.copy()
        if dtype in HALF_DTYPES:
            vals[7:] = [6e4, -6e4] if dtype is th.float16 else [1e30, -1e30]
        t = new_tensor(np.asarray(vals), dtype)
        big = {th.float32: np.finfo(np.float32).max, th.float64: np.finfo(np.float64).max,
               th.float16: 65504.0, th.bfloat16: 3.3895313892515355e38}[dtype]
        stored = to_numpy(t).astype(np.float64)
        want = np.nan_to_num(stored, nan=0.0, posinf=big, neginf=-big)
        assert_close(th.nan_to_num(t), want, dtype, rtol=0, atol=0)
        want = np.nan_to_num(stored, nan=1.0, posinf=2.0, neginf=-3.0)
        assert_close(th.nan_to_num(t, nan=1.0, posinf=2.0, neginf=-3.0), want, dtype)
        assert_close(t.nan_to_num(nan=7.0), np.nan_to_num(stored, nan=7.0, posinf=big,
                                                          neginf=-big), dtype)
        u = t.clone()
        assert u.nan_to_num_(0.0, 1.0, -1.0) is u
        assert_close(u, np.nan_to_num(stored, nan=0.0, posinf=1.0, neginf=-1.0), dtype)
    else:
        t = new_tensor(np.asarray([0, 1, 1, 0]), dtype)
        assert_close(th.nan_to_num(t), to_numpy(t), dtype)

    def check(layout):  # every layout, with nan/inf planted in random data
        t, a = make(SHAPE, dtype, layout)
        if dtype.is_floating_point:
            # specials as 0-d tensors of t's dtype: a Python float would widen
            # a 0-d t (see test_zero_dim_tensor_with_python_scalar_keeps_dtype)
            inf, nan = (new_tensor(np.asarray(v), dtype) for v in (np.inf, np.nan))
            t = th.where(t > 2, inf, th.where(t < -2, -inf, t))
            t = th.where((t > 0.5) & (t < 1), nan, t)
            a = to_numpy(t).astype(np.float64)
            big = _FINITE_MAX[dtype]
            want = np.nan_to_num(a, nan=0.0, posinf=big, neginf=-big)
        else:
            want = a
        assert_close(th.nan_to_num(t), want, dtype)
        out = th.empty(*t.shape, dtype=dtype)
        assert th.nan_to_num(t, out=out) is out
        assert_close(out, want, dtype)
    each(LAYOUTS, check)


# ---- special values --------------------------------------------------------
SPECIALS = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.5, -2.5,
                     3.0, 100.0, -100.0, 1e-3, 0.999, -0.999, 1e-30])
# sizes: one element (scalar code), 64 contiguous (vector loops), strided
PATHS = ["scalar", "vector", "strided"]

def _special_input(dtype, path):
    vals = SPECIALS if dtype is not th.float16 else SPECIALS[SPECIALS != 1e-30]
    if path == "vector":
        base = np.tile(vals, 4)
        return new_tensor(np.asarray(base), dtype), as_dtype(base, dtype)
    if path == "strided":
        base = np.repeat(vals, 2)
        return new_tensor(np.asarray(base), dtype)[::2], as_dtype(vals, dtype)
    return None, as_dtype(vals, dtype)


def _special_cases():
    cases = []
    for name in sorted(set(UNARY) - {"bitwise_not"}):
        for d in FLOAT_DTYPES:
            cases.append(pytest.param(name, d, id=f"{name}-{d.name}"))
    return cases


@pytest.mark.parametrize("name,dtype", _special_cases())
def test_unary_special_values(name, dtype):
    """nan, +-inf, +-0, tiny and large values through one element (scalar
    code), 72 contiguous elements (vector loops) and a strided view."""
    def check(path):
        t, a = _special_input(dtype, path)
        expected, rdt = unary_reference(name, a, dtype)
        if path == "scalar":
            for v, e in zip(a, expected):
                r = getattr(th, name)(new_tensor(np.asarray(v), dtype))
                assert_close(r, np.asarray(e), rdt, atol=_special_atol(dtype))
            return
        assert_close(getattr(th, name)(t), expected, rdt, atol=_special_atol(dtype))
    each(PATHS, check)


def _special_atol(dtype):
    # sigmoid(-100) is 3.8e-44 in float32: a flushed denormal is close enough
    return {th.float32: 1e-30, th.float64: 1e-300}.get(dtype)


@pytest.mark.parametrize("dtype", [th.float32, th.float64, th.float16, th.bfloat16],
                         ids=ids(FLOAT_DTYPES))
@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "floor_divide", "remainder",
                                  "fmod", "pow", "atan2", "hypot", "copysign", "maximum",
                                  "minimum", "eq", "lt", "ge", "div_trunc"])
def test_binary_special_values(name, dtype):
    vals = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -2.5, 3.0])
    a, b = np.meshgrid(vals, vals)
    a, b = as_dtype(a.ravel(), dtype), as_dtype(b.ravel(), dtype)
    x, y = new_tensor(np.asarray(a), dtype), new_tensor(np.asarray(b), dtype)
    rt = result_dtype(name, dtype, dtype)
    assert_close(call_binary(name, x, y), binary_reference(name, a, dtype, b, dtype, rt), rt)


def test_maximum_minimum_propagate_nan():
    a = th.tensor([np.nan, 1.0, np.nan])
    b = th.tensor([1.0, np.nan, np.nan])
    assert np.isnan(to_numpy(th.maximum(a, b))).all()
    assert np.isnan(to_numpy(th.minimum(a, b))).all()


def test_reciprocal_of_zero_float32_vector():
    r = th.reciprocal(th.zeros(16))
    assert np.isposinf(to_numpy(r)).all()


def test_rsqrt_of_zero_float32():
    assert th.rsqrt(th.zeros(1)).item() == math.inf


def test_sqrt_of_inf_float32_vector():
    assert np.isposinf(to_numpy(th.sqrt(th.full((16,), math.inf)))).all()


def test_sigmoid_of_large_negative_float32_vector():
    r = to_numpy(th.sigmoid(th.full((16,), -100.0)))
    assert (r >= 0).all() and (r < 1e-40).all()
    assert (to_numpy(th.sigmoid(th.full((16,), -math.inf))) == 0).all()


# ---- aliases -----------------------------------------------------------------
@pytest.mark.parametrize("alias,target", sorted(
    list(_elementwise.UNARY_ALIASES.items()) +
    [(k, v) for k, v in _elementwise.BINARY_ALIASES.items() if v] +
    [("subtract", "sub"), ("divide", "div"), ("true_divide", "div"), ("clip", "clamp")]))
def test_aliases(alias, target, make):
    x, a = make((3, 4), th.float64, low=1.1, high=1.9)
    y, b = make((3, 4), th.float64, low=0.2, high=0.9)
    if target in UNARY or target in ("trunc",):
        assert_close(getattr(th, alias)(x), to_numpy(getattr(th, target)(x)))
        assert_close(getattr(x, alias)(), to_numpy(getattr(x, target)()))
    elif target == "clamp":
        assert_close(getattr(th, alias)(x, 1.25, 1.5), np.clip(a, 1.25, 1.5))
    else:
        assert_close(getattr(th, alias)(x, y), to_numpy(getattr(th, target)(x, y)))
        assert_close(getattr(x, alias)(y), to_numpy(getattr(x, target)(y)))


def test_positive_is_identity():
    t = th.ones(2)
    assert th.positive(t) is t and t.positive() is t


def test_nan_to_num_explicit_infinity_is_kept():
    t = th.tensor([math.inf, -math.inf, math.nan])
    assert th.nan_to_num(t, posinf=math.inf, neginf=-math.inf).tolist() == \
        [math.inf, -math.inf, 0.0]


def test_python_float_keeps_double_precision():
    t = th.zeros(2, dtype=th.float64)
    assert (t + 0.1).tolist() == [0.1, 0.1]
    assert (th.ones(1, dtype=th.float64) * 0.1).item() == 0.1
    assert th.full((1,), 0.1, dtype=th.float64).item() == 0.1
    assert th.clamp(t, min=0.1).tolist() == [0.1, 0.1]
    assert 0.1 in th.tensor([0.1, 0.2], dtype=th.float64)
    t.fill_(0.1)
    assert t.tolist() == [0.1, 0.1]


def test_zero_dim_tensor_with_python_scalar_keeps_dtype():
    assert (th.tensor(5, dtype=th.int8) + 1).dtype is th.int8
    assert (th.tensor(5, dtype=th.int16) * 2).dtype is th.int16
    assert (th.tensor(5.0, dtype=th.float16) * 2.5).dtype is th.float16
    assert (th.tensor(5.0, dtype=th.float64) * 2.5).dtype is th.float64
    assert th.clamp(th.tensor(5, dtype=th.int8), 1, 2).dtype is th.int8


def test_python_scalar_category_still_promotes_zero_dim():
    assert (th.tensor(5, dtype=th.int8) + 2.5).dtype is th.float32
    assert (th.tensor(True) + 1).dtype is th.int64


def test_lerp_scalar_weight_precision():
    start = new_tensor(np.zeros(1), th.float64)
    end = new_tensor(np.ones(1), th.float64)
    assert th.lerp(start, end, 0.3).item() == 0.3
    start16 = new_tensor(np.zeros(1), th.bfloat16)
    end16 = new_tensor(np.full(1, 100.0), th.bfloat16)
    assert th.lerp(start16, end16, 0.3).item() == 30.0  # not 30.125


# ---- crashes, overlap, the parallel path ------------------------------------
_MIN_DIV_SCRIPT = """
import ember.th as th
for d, m in ((th.int64, -2 ** 63), (th.int32, -2 ** 31)):
    x = th.tensor([m, 7], dtype=d)
    y = th.tensor([-1, -1], dtype=d)
    print((x // y).tolist(), (x % y).tolist(), th.fmod(x, y).tolist(),
          th.div(x, y, rounding_mode="trunc").tolist(), flush=True)
"""


def test_int_min_divided_by_minus_one_does_not_crash():
    import os
    import subprocess
    import sys
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    r = subprocess.run([sys.executable, "-c", _MIN_DIV_SCRIPT], capture_output=True,
                       text=True, env=env, timeout=60)
    assert r.returncode == 0, f"crashed with status {r.returncode}: {r.stderr[-300:]}"
    lines = r.stdout.split("\n")
    assert lines[0] == f"[{-2 ** 63}, -7] [0, 0] [0, 0] [{-2 ** 63}, -7]"


def test_inplace_on_expanded_tensor_is_an_error():
    t = th.zeros(3).expand(2, 3)
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        t.add_(1)


def test_unary_out_aliasing_an_input(make):
    y, b = make((9,), th.float64)
    th.neg(y[1:], out=y[:-1])
    want = b.copy()
    want[:-1] = -b[1:]
    assert_close(y, want)
    z, c = make((4, 4), th.float32)
    th.exp(z.t(), out=z)
    assert_close(z, np.exp(c.T.astype(np.float64)))


@pytest.fixture
def threads():
    n = th.get_num_threads()
    yield th.set_num_threads
    th.set_num_threads(n)


@pytest.mark.parametrize("nthreads", [1, 2])
def test_large_tensors_parallel_path(nthreads, threads, rng):
    """Tensors big enough to be split across threads, in several layouts."""
    threads(nthreads)
    assert th.get_num_threads() == nthreads
    a = rng.standard_normal((600, 500)).astype(np.float32)
    b = rng.standard_normal(600).astype(np.float32)
    x, y = th.tensor(a), th.tensor(b)
    assert_close(x.t() + y, a.T + b, th.float32)
    assert_close(th.exp(x[:, ::2]), np.exp(a[:, ::2].astype(np.float64)), th.float32)
    assert_close(th.where(x > 0, x, y[:, None]), np.where(a > 0, a, b[:, None]), th.float32)
    assert_close(x.t().contiguous(), a.T, th.float32)
    assert_close(x.half(), a.astype(np.float16), th.float16)
    i = (a * 100).astype(np.int32)
    assert_close(th.tensor(i) // 7, i // 7, th.int32)
    z = x.clone()
    z.mul_(2).add_(y[:, None], alpha=-1)
    assert_close(z, 2 * a.astype(np.float64) - b[:, None], th.float32)


def test_set_num_threads_errors(threads):
    with pytest.raises(TypeError, match="set_num_threads expects an int"):
        threads(True)
    with pytest.raises(TypeError):
        threads(1.5)
    with pytest.raises((ValueError, RuntimeError)):
        threads(0)
