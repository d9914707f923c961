"""Element-wise ops: math of one tensor, arithmetic and comparisons of two,
and where/lerp/clamp/softmax and friends.  Formulas follow PyTorch's
derivatives.yaml, written with ember ops so they differentiate again."""
import math
import operator

from .._creation import zeros_like
from .._tensor import Tensor
from .define import NAMESPACE, OUT, binary, dispatch_point, op, raw, register, unary
from .samples import Index, Mask, S, T

# samples every element-wise op of one tensor runs with
_SHAPES = ((3, 4), (), (2, 3, 2))


def _samples(low=-2.0, high=2.0):
    return [S(T(*s, low=low, high=high)) for s in _SHAPES]


def _abs_grad(g, x):
    if x.is_complex():  # d|z| = Re(conj(z)/|z| dz): the gradient g z/|z|, 0 at z = 0
        r = x.abs()
        return g * x / r.masked_fill(r == 0, 1)
    return g * x.sign()


def _zero(g, x, y):
    return zeros_like(g)


_LN2 = math.log(2.0)
_LN10 = math.log(10.0)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_SQRT_PI_OVER_2 = math.sqrt(math.pi) / 2.0

# ---- one tensor ------------------------------------------------------------
# name, formula(g, x, y), what it saves, domain of the samples
for _name, _formula, _saves, _domain in (
    ("neg", lambda g, x, y: -g, "", None),
    ("abs", lambda g, x, y: _abs_grad(g, x), "x", None),
    ("exp", lambda g, x, y: g * y, "y", None),
    ("exp2", lambda g, x, y: g * y * _LN2, "y", None),
    ("expm1", lambda g, x, y: g * (y + 1), "y", None),
    ("log", lambda g, x, y: g / x, "x", (0.1, 3.0)),
    ("log2", lambda g, x, y: g / (x * _LN2), "x", (0.1, 3.0)),
    ("log10", lambda g, x, y: g / (x * _LN10), "x", (0.1, 3.0)),
    ("log1p", lambda g, x, y: g / (x + 1), "x", (-0.8, 2.0)),
    ("sqrt", lambda g, x, y: g / (2 * y), "y", (0.1, 3.0)),
    ("rsqrt", lambda g, x, y: -0.5 * g * y.pow(3), "y", (0.1, 3.0)),
    ("reciprocal", lambda g, x, y: -g * y * y, "y", (0.5, 2.0)),
    ("square", lambda g, x, y: 2 * g * x, "x", None),
    ("sin", lambda g, x, y: g * x.cos(), "x", None),
    ("cos", lambda g, x, y: -g * x.sin(), "x", None),
    ("tan", lambda g, x, y: g * (1 + y * y), "y", (-1.2, 1.2)),
    ("asin", lambda g, x, y: g * (1 - x * x).rsqrt(), "x", (-0.9, 0.9)),
    ("acos", lambda g, x, y: -g * (1 - x * x).rsqrt(), "x", (-0.9, 0.9)),
    ("atan", lambda g, x, y: g / (1 + x * x), "x", None),
    ("sinh", lambda g, x, y: g * x.cosh(), "x", None),
    ("cosh", lambda g, x, y: g * x.sinh(), "x", None),
    ("tanh", lambda g, x, y: g * (1 - y * y), "y", None),
    ("asinh", lambda g, x, y: g * (x * x + 1).rsqrt(), "x", None),
    ("acosh", lambda g, x, y: g * (x * x - 1).rsqrt(), "x", (1.2, 3.0)),
    ("atanh", lambda g, x, y: g / (1 - x * x), "x", (-0.9, 0.9)),
    ("sigmoid", lambda g, x, y: g * y * (1 - y), "y", None),
    ("erf", lambda g, x, y: g * _TWO_OVER_SQRT_PI * (-x * x).exp(), "x", None),
    ("erfc", lambda g, x, y: -g * _TWO_OVER_SQRT_PI * (-x * x).exp(), "x", None),
    ("erfinv", lambda g, x, y: g * _SQRT_PI_OVER_2 * (y * y).exp(), "y", (-0.9, 0.9)),
    ("frac", lambda g, x, y: g, "", None),
    ("sign", _zero, "", None),
    ("floor", _zero, "", None),
    ("ceil", _zero, "", None),
    ("trunc", _zero, "", None),
):
    unary(_name, _formula, saves=_saves,
          samples=_samples(*_domain) if _domain else _samples(),
          aliases={"neg": ("negative",), "abs": ("absolute",), "asin": ("arcsin",),
                   "acos": ("arccos",), "atan": ("arctan",), "asinh": ("arcsinh",),
                   "acosh": ("arccosh",), "atanh": ("arctanh",), "trunc": ("fix",),
                   "sign": ("sgn",)}.get(_name, ()))

unary("relu", lambda g, x, y: g * (y > 0), saves="y", samples=_samples(),
      forward=lambda d: d.clamp(0), forward_=lambda d: d.clamp_(0))

# predicates and bit ops: no gradient, no in-place form for predicates
for _name in ("isnan", "isinf", "isfinite", "isposinf", "isneginf"):
    unary(_name, None, inplace=False)
unary("logical_not", None)
unary("bitwise_not", None)

Tensor.__neg__ = NAMESPACE["neg"]
Tensor.__abs__ = NAMESPACE["abs"]
Tensor.__pos__ = lambda self: self
Tensor.__invert__ = NAMESPACE["bitwise_not"]
Tensor.positive = NAMESPACE["positive"] = lambda input: input


@op()
class round:
    """Rounds half to even; with `decimals`, to that many decimal places."""

    def forward(input, *, decimals=0):
        return input._data.round(decimals=decimals) if decimals else input._data.round()

    def backward(g):
        return zeros_like(g)

    def inplace(input, *, decimals=0):
        input._data.copy_(input._data.round(decimals=decimals))

    samples = [S(T(3, 4)), S(T(3, 4), decimals=2)]


# ---- two operands ----------------------------------------------------------
def _binary_samples(low=-2.0, high=2.0, b_low=None, b_high=None, scalar=1.5):
    b_low = low if b_low is None else b_low
    b_high = high if b_high is None else b_high
    return [S(T(3, 4, low=low, high=high), T(3, 4, low=b_low, high=b_high)),
            S(T(3, 4, low=low, high=high), T(4, low=b_low, high=b_high), name="broadcast_b"),
            S(T(3, 1, low=low, high=high), T(1, 4, low=b_low, high=b_high), name="broadcast_ab"),
            S(T(low=low, high=high), T(2, 3, low=b_low, high=b_high), name="0d_a"),
            S(T(3, 4, low=low, high=high), scalar, name="number_b")]


def _pow_base(g, a, b, y):
    if isinstance(b, Tensor):
        return (g * b * a.pow(b - 1)).masked_fill(b == 0, 0)
    return zeros_like(g) if b == 0 else g * b * a.pow(b - 1)


def _pow_exponent(g, a, b, y):
    if isinstance(a, Tensor):
        return (g * y * a.log()).masked_fill((a == 0) & (b.real >= 0), 0)
    return zeros_like(g) if a == 0 else g * y * math.log(a)


def _maximum_weight(g, a, b):
    """1 where a wins, 1/2 on ties (PyTorch splits ties evenly)."""
    return (a > b).to(g.dtype) + (a == b).to(g.dtype) * 0.5


binary("add", lambda g, a, b, y: g, lambda g, a, b, y: g, saves="",
       forward=operator.add, dunders=("__add__", "__radd__", "__iadd__"),
       samples=_binary_samples())
binary("sub", lambda g, a, b, y: g, lambda g, a, b, y: -g, saves="",
       forward=operator.sub, dunders=("__sub__", "__rsub__", "__isub__"),
       aliases=("subtract",), samples=_binary_samples())
binary("mul", lambda g, a, b, y: g * b, lambda g, a, b, y: g * a,
       forward=operator.mul, dunders=("__mul__", "__rmul__", "__imul__"),
       aliases=("multiply",), samples=_binary_samples())
binary("div", lambda g, a, b, y: g / b, lambda g, a, b, y: -g * a / (b * b),
       forward=operator.truediv, dunders=("__truediv__", "__rtruediv__", "__itruediv__"),
       aliases=("divide", "true_divide"), samples=_binary_samples(b_low=0.5, b_high=2.0))
binary("pow", _pow_base, _pow_exponent, saves="aby", forward=operator.pow,
       dunders=("__pow__", "__rpow__", "__ipow__"),
       samples=_binary_samples(low=0.5, high=2.0) +
       [S(T(3, 4), 2, name="int_exponent"), S(T(3, 4), 0, name="zero_exponent")])
binary("atan2", lambda g, a, b, y: g * b / (a * a + b * b),
       lambda g, a, b, y: -g * a / (a * a + b * b), aliases=("arctan2",),
       samples=_binary_samples(low=0.5, high=2.0)[:3])
binary("maximum", lambda g, a, b, y: g * _maximum_weight(g, a, b),
       lambda g, a, b, y: g * _maximum_weight(g, b, a), samples=_binary_samples()[:3])
binary("minimum", lambda g, a, b, y: g * _maximum_weight(g, b, a),
       lambda g, a, b, y: g * _maximum_weight(g, a, b), samples=_binary_samples()[:3])
binary("fmod", lambda g, a, b, y: g, lambda g, a, b, y: -g * (a / b).trunc(),
       samples=_binary_samples(b_low=0.3, b_high=0.9))
binary("remainder", lambda g, a, b, y: g,
       lambda g, a, b, y: -g * (a / b).floor(), forward=operator.mod,
       dunders=("__mod__", "__rmod__", "__imod__"),
       samples=_binary_samples(b_low=0.3, b_high=0.9))
binary("hypot", lambda g, a, b, y: g * a / y, lambda g, a, b, y: g * b / y, saves="aby",
       samples=_binary_samples()[:3])
binary("copysign", lambda g, a, b, y: g * (y / a).masked_fill(a == 0, 0),
       lambda g, a, b, y: zeros_like(g), saves="ay", samples=_binary_samples()[:3])
binary("ldexp", lambda g, a, b, y: g * 2.0 ** b, lambda g, a, b, y: g * y * math.log(2),
       saves="by", node_name="MulBackward0", numbers=False,
       samples=_binary_samples(b_low=-3.0, b_high=3.0)[:4])
binary("floor_divide", None, forward=operator.floordiv,
       dunders=("__floordiv__", "__rfloordiv__", "__ifloordiv__"))

# comparisons, logic and bits: results without grad_fn
for _name, _fwd, _dunders, _aliases in (
        ("eq", operator.eq, ("__eq__",), ()),
        ("ne", operator.ne, ("__ne__",), ("not_equal",)),
        ("lt", operator.lt, ("__lt__",), ("less",)),
        ("le", operator.le, ("__le__",), ("less_equal",)),
        ("gt", operator.gt, ("__gt__",), ("greater",)),
        ("ge", operator.ge, ("__ge__",), ("greater_equal",)),
        ("logical_and", None, (), ()), ("logical_or", None, (), ()),
        ("logical_xor", None, (), ()),
        ("bitwise_and", operator.and_, ("__and__", "__rand__", "__iand__"), ()),
        ("bitwise_or", operator.or_, ("__or__", "__ror__", "__ior__"), ()),
        ("bitwise_xor", operator.xor, ("__xor__", "__rxor__", "__ixor__"), ()),
        ("bitwise_left_shift", operator.lshift,
         ("__lshift__", "__rlshift__", "__ilshift__"), ()),
        ("bitwise_right_shift", operator.rshift,
         ("__rshift__", "__rrshift__", "__irshift__"), ())):
    operands = (T(3, 4, grad=False), T(3, 4, grad=False)) if _name[0] != "b" else \
        (Index(shape=(3, 4), high=8), Index(shape=(3, 4), high=3))
    binary(_name, None, forward=_fwd, dunders=_dunders, aliases=_aliases,
           samples=[S(*operands)])
Tensor.__hash__ = object.__hash__  # defining __eq__ removed it


def rsub(input, other, *, alpha=1):
    return sub(other, input, alpha=alpha)


def _scaled(name, base):
    """add/sub with PyTorch's alpha keyword (other * alpha)."""
    plain = NAMESPACE[name]

    def fn(input, other, *, alpha=1):
        return plain(input, other if alpha == 1 else other * alpha)

    def fn_(self, other, *, alpha=1):
        return base(self, other if alpha == 1 else other * alpha)

    fn.__name__, fn_.__name__ = name, name + "_"
    return fn, fn_


add, add_ = _scaled("add", Tensor.add_)
sub, sub_ = _scaled("sub", Tensor.sub_)
for _n, _f, _f_ in (("add", add, add_), ("sub", sub, sub_), ("subtract", sub, sub_)):
    dispatch_point(_f, _n if _n != "subtract" else "sub")
    dispatch_point(_f_, _n if _n != "subtract" else "sub")
    NAMESPACE[_n] = _f
    setattr(Tensor, _n, _f)
    setattr(Tensor, _n + "_", _f_)
NAMESPACE["rsub"] = Tensor.rsub = dispatch_point(rsub, "rsub")


@op(node_name="DivBackward1")
class _div_rounded:
    """div with rounding_mode: piecewise constant, so its gradient is 0."""

    def forward(input, other, rounding_mode):
        return input._data.div(raw(other), rounding_mode=rounding_mode)

    def inputs(input, other, rounding_mode):
        return (input, other)

    def backward(g):
        return (zeros_like(g), None)

    samples = [S(T(3, 4), T(3, 4, low=0.5), "floor"), S(T(3, 4), T(3, 4, low=0.5), "trunc")]


_true_div = NAMESPACE["div"]
_true_div_ = Tensor.div_


def div(input, other, *, rounding_mode=None):
    if rounding_mode is None:
        return _true_div(input, other)
    return _div_rounded(input, other, rounding_mode)


def div_(self, other, *, rounding_mode=None):
    if rounding_mode is None:
        return _true_div_(self, other)
    return self.copy_(_div_rounded(self, other, rounding_mode))


dispatch_point(div, "div")
dispatch_point(div_, "div")
for _n in ("div", "divide", "true_divide"):
    NAMESPACE[_n] = div
    setattr(Tensor, _n, div)
    setattr(Tensor, _n + "_", div_)


# ---- three operands and other element-wise ops -------------------------------
@op()
class where:
    """where(condition, input, other): input where condition holds, else other."""

    def forward(condition, input, other):
        return _raw_where(condition._data, raw(input), raw(other))

    def inputs(condition, input, other):
        return (None, input, other)

    def save(out, condition, input, other):
        return (condition, _shape(input), _shape(other))

    backward = (
        lambda g, cond, a_shape, b_shape: None,
        lambda g, cond, a_shape, b_shape: g.masked_fill(~cond, 0).sum_to_size(a_shape),
        lambda g, cond, a_shape, b_shape: g.masked_fill(cond, 0).sum_to_size(b_shape),
    )

    samples = [S(Mask(3, 4), T(3, 4), T(3, 4)),
               S(Mask(3, 1), T(3, 4), T(4), name="broadcast"),
               S(Mask(3, 4), T(3, 4), 0.5, name="number_other")]


def _shape(x):
    return x.shape if isinstance(x, Tensor) else None


def _raw_where(cond, a, b):
    # the raw backend's where(condition, input, other) lives in its namespace;
    # reach it through the tensor method form input.where(condition, other)
    if hasattr(a, "where"):
        return a.where(cond, b)
    if hasattr(b, "where"):  # a is a number: swap via the negated condition
        return b.where(cond.logical_not(), a)
    from .._device import namespace
    return namespace(cond.device).where(cond, a, b)


_where3 = NAMESPACE["where"]


def where_(condition, input=None, other=None):
    if input is None and other is None:
        return condition.nonzero(as_tuple=True)
    return _where3(condition, input, other)


NAMESPACE["where"] = dispatch_point(where_, "where")
Tensor.where = dispatch_point(lambda self, condition, other: _where3(condition, self, other),
                              "where")


@op()
class lerp:
    """start + weight * (end - start)."""

    def forward(input, end, weight):
        return input._data.lerp(end._data, raw(weight))

    def inputs(input, end, weight):
        return (input, end, weight)

    def save(out, input, end, weight):
        return (input, end, weight, input.shape, end.shape, _shape(weight))

    backward = (
        lambda g, a, b, w, sa, sb, sw: (g * (1 - w)).sum_to_size(sa),
        lambda g, a, b, w, sa, sb, sw: (g * w).sum_to_size(sb),
        lambda g, a, b, w, sa, sb, sw: (g * (b - a)).sum_to_size(sw),
    )

    def inplace(input, end, weight):
        input._data.copy_(input._data.lerp(end._data, raw(weight)))

    samples = [S(T(3, 4), T(3, 4), 0.3), S(T(3, 4), T(3, 4), T(3, 4, low=0, high=1)),
               S(T(3, 4), T(4), T(3, 1, low=0, high=1), name="broadcast")]


@op()
class clamp:
    """Limits input to [min, max] (either may be None, a number or a tensor)."""

    def forward(input, min=None, max=None):
        return input._data.clamp(raw(min), raw(max))

    def inputs(input, min=None, max=None):
        return (input, min, max)

    def save(out, input, min=None, max=None):
        return (input, min, max)

    backward = (
        lambda g, x, lo, hi: g * _inside(x, lo, hi),
        lambda g, x, lo, hi: (g * _lower_active(x, lo, hi)).sum_to_size(lo.shape),
        lambda g, x, lo, hi: (g * _upper_active(x, lo, hi)).sum_to_size(hi.shape),
    )

    def inplace(input, min=None, max=None):
        input._data.clamp_(raw(min), raw(max))

    samples = [S(T(3, 4), -0.5, 0.5), S(T(3, 4), min=0.0), S(T(3, 4), max=0.0),
               S(T(3, 4), T(3, 4, low=-1, high=0), T(4, low=0, high=1), name="tensor_bounds")]


def _inside(x, lo, hi):
    mask = None
    if lo is not None:
        mask = x >= lo
    if hi is not None:
        mask = (x <= hi) if mask is None else mask & (x <= hi)
    return mask


def _lower_active(x, lo, hi):
    # clamp is min(max(x, lo), hi): where lo > hi the result is hi
    return (x < lo) if hi is None else (x < lo) & (lo <= hi)


def _upper_active(x, lo, hi):
    return (x > hi) if lo is None else (x > hi) | (lo > hi)


Tensor.clip = Tensor.clamp
Tensor.clip_ = Tensor.clamp_
NAMESPACE["clip"] = NAMESPACE["clamp"]
NAMESPACE["clamp_min"] = Tensor.clamp_min = dispatch_point(
    lambda input, min: clamp(input, min=min), "clamp_min")
NAMESPACE["clamp_max"] = Tensor.clamp_max = dispatch_point(
    lambda input, max: clamp(input, max=max), "clamp_max")
Tensor.clamp_min_ = lambda self, min: self.clamp_(min=min)
Tensor.clamp_max_ = lambda self, max: self.clamp_(max=max)


@op()
class nan_to_num:
    """NaN, +inf and -inf replaced by finite numbers."""

    def forward(input, nan=0.0, posinf=None, neginf=None):
        return input._data.nan_to_num(nan, posinf, neginf)

    def save(out, input, nan=0.0, posinf=None, neginf=None):
        return (input,)

    def backward(g, x):
        return g * x.isfinite()

    def inplace(input, nan=0.0, posinf=None, neginf=None):
        input._data.nan_to_num_(nan, posinf, neginf)

    samples = [S(T(3, 4))]


@op()
class softmax:
    """exp(x) / sum(exp(x)) along dim."""

    def forward(input, dim, dtype=None):
        x = input._data if dtype is None else input._data.to(dtype)
        if x.numel() == 0:  # nothing to normalise (amax refuses an empty dim)
            return x.clone()
        e = (x - x.amax(dim, keepdim=True)).exp()
        return e / e.sum(dim, keepdim=True)

    def save(out, input, dim, dtype=None):
        return (OUT, dim)

    def backward(g, y, dim):
        return y * (g - (g * y).sum(dim, keepdim=True))

    samples = [S(T(3, 4), 1), S(T(3, 4), 0), S(T(2, 3, 2), -1), S(T(2, 0), 1), S(T(0, 3), 1)]


@op()
class log_softmax:
    """log(softmax(x)) along dim, computed stably."""

    def forward(input, dim, dtype=None):
        x = input._data if dtype is None else input._data.to(dtype)
        if x.numel() == 0:
            return x.clone()
        return x - x.logsumexp(dim, keepdim=True)

    def save(out, input, dim, dtype=None):
        return (OUT, dim)

    def backward(g, y, dim):
        return g - y.exp() * g.sum(dim, keepdim=True)

    samples = [S(T(3, 4), 1), S(T(3, 4), 0), S(T(2, 3, 2), -1), S(T(2, 0), 1), S(T(0, 3), 1)]


def addcmul(input, tensor1, tensor2, *, value=1):
    return input + value * tensor1 * tensor2


def addcdiv(input, tensor1, tensor2, *, value=1):
    return input + value * tensor1 / tensor2


def xlogy(input, other):
    x = input if isinstance(input, Tensor) else zeros_like(other) + input
    return (x * (other.log() if isinstance(other, Tensor) else math.log(other))).masked_fill(
        x == 0, 0)


def float_power(input, exponent):
    """pow computed in float64."""
    def wide(v):
        return v.double() if isinstance(v, Tensor) else v
    return NAMESPACE["pow"](wide(input), wide(exponent))


for _f in (addcmul, addcdiv, xlogy, float_power):
    register(_f.__name__, function=_f, method=_f,
             samples=[S(T(3, 4), T(3, 4), T(3, 4, low=0.5))] if _f.__name__.startswith("addc")
             else [S(T(3, 4), T(3, 4, low=0.5))] if _f is xlogy else
             [S(T(3, 4, low=0.5), 1.5)])
Tensor.addcmul_ = lambda self, t1, t2, *, value=1: self.add_(value * t1 * t2)
Tensor.addcdiv_ = lambda self, t1, t2, *, value=1: self.add_(value * t1 / t2)


# ---- closeness: comparisons, no gradient -----------------------------------------
def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """|input - other| <= atol + rtol * |other|, element-wise."""
    a, b = input.detach(), other.detach() if isinstance(other, Tensor) else other
    close = (a - b).abs() <= atol + rtol * (b.abs() if isinstance(b, Tensor) else abs(b))
    close = close | (a == b)  # equal infinities
    if equal_nan:
        close = close | (a.isnan() & (b.isnan() if isinstance(b, Tensor) else (b != b)))
    return close


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bool(isclose(input, other, rtol, atol, equal_nan).all())


def equal(input, other):
    """True when both have the same shape and elements."""
    return input.shape == other.shape and bool((input.detach() == other.detach()).all())


for _f in (isclose, allclose, equal):
    register(_f.__name__, function=_f, method=_f, differentiable=False)
