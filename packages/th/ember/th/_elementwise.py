"""Element-wise math: functions, Tensor methods, in-place forms and the
Python operators, all driven by libTH's op codes."""
from ._core import Tensor, operand, scalar_ptr, wrap
from ._lib import check, ffi, lib
from ._vocabulary import codes as _codes, read_ops

_bin = lib.th_binary
_bin_out = lib.th_binary_out
_un = lib.th_unary
_un_out = lib.th_unary_out

#: libTH's op vocabulary (include/th_ops.def), read from the library
OPS = read_ops(ffi, lib, "th")
# every op becomes a function and a method; the ones with extra arguments
# (add/sub alpha=, div rounding_mode=, round decimals=) are replaced below
UNARY_OPS = _codes(OPS, "unary")
# predicates have no in-place form in PyTorch
_NO_INPLACE = set(UNARY_OPS) - set(_codes(OPS, "unary", exclude={"no_inplace"}))
UNARY_ALIASES = {"negative": "neg", "absolute": "abs", "arcsin": "asin",
                 "arccos": "acos", "arctan": "atan", "arcsinh": "asinh",
                 "arccosh": "acosh", "arctanh": "atanh", "fix": "trunc"}

# trunc_divide is div(rounding_mode='trunc')
BINARY_OPS = _codes(OPS, "binary", exclude={"hidden"})
BINARY_ALIASES = {"multiply": "mul", "arctan2": "atan2", "greater": "gt",
                  "greater_equal": "ge", "less": "lt", "less_equal": "le",
                  "not_equal": "ne", "float_power": None}

_functions = {}


def _make_unary(name, code):
    def fn(input, *, out=None):
        if out is None:
            return wrap(_un(code, input._p))
        check(_un_out(code, out._p, input._p))
        return out

    def inplace(self):
        check(_un_out(code, self._p, self._p))
        return self

    fn.__name__ = name
    fn.__doc__ = f"Element-wise {name}; returns a new tensor (or writes out=)."
    inplace.__name__ = name + "_"
    return fn, inplace


def _make_binary(name, code):
    def fn(input, other, *, out=None):
        if out is None:
            return wrap(_bin(code, operand(input), operand(other)))
        check(_bin_out(code, out._p, operand(input), operand(other)))
        return out

    def method(self, other):
        return wrap(_bin(code, self._p, operand(other)))

    def inplace(self, other):
        check(_bin_out(code, self._p, self._p, operand(other)))
        return self

    fn.__name__ = method.__name__ = name
    inplace.__name__ = name + "_"
    return fn, method, inplace


for _name, _code in UNARY_OPS.items():
    _f, _fi = _make_unary(_name, _code)
    _functions[_name] = _f
    setattr(Tensor, _name, _f)
    if _name not in _NO_INPLACE:
        _functions[_name + "_"] = _fi
        setattr(Tensor, _name + "_", _fi)
for _alias, _target in UNARY_ALIASES.items():
    _functions[_alias] = _functions[_target]
    setattr(Tensor, _alias, _functions[_target])
    setattr(Tensor, _alias + "_", getattr(Tensor, _target + "_"))

for _name, _code in BINARY_OPS.items():
    _f, _m, _fi = _make_binary(_name, _code)
    _functions[_name] = _f
    setattr(Tensor, _name, _m)
    setattr(Tensor, _name + "_", _fi)
for _alias, _target in BINARY_ALIASES.items():
    if _target:
        _functions[_alias] = _functions[_target]
        setattr(Tensor, _alias, getattr(Tensor, _target))
        setattr(Tensor, _alias + "_", getattr(Tensor, _target + "_"))


# ---- ops with extra arguments ----------------------------------------
def add(input, other, *, alpha=1, out=None):
    a, b = operand(input), operand(other)
    if alpha == 1:
        if out is None:
            return wrap(_bin(lib.TH_ADD, a, b))
        check(_bin_out(lib.TH_ADD, out._p, a, b))
        return out
    if out is None:
        return wrap(lib.th_add_scaled(a, b, scalar_ptr(alpha)))
    check(lib.th_add_scaled_out(out._p, a, b, scalar_ptr(alpha)))
    return out


def sub(input, other, *, alpha=1, out=None):
    a, b = operand(input), operand(other)
    if alpha == 1:
        if out is None:
            return wrap(_bin(lib.TH_SUB, a, b))
        check(_bin_out(lib.TH_SUB, out._p, a, b))
        return out
    if a.dtype == lib.TH_BOOL and b.dtype == lib.TH_BOOL:
        return wrap(_bin(lib.TH_SUB, a, b))  # raises the bool message
    if out is None:
        return wrap(lib.th_add_scaled(a, b, scalar_ptr(-alpha)))
    check(lib.th_add_scaled_out(out._p, a, b, scalar_ptr(-alpha)))
    return out


_ROUNDING = {None: lib.TH_DIV, "trunc": lib.TH_TRUNC_DIVIDE,
             "floor": lib.TH_FLOOR_DIVIDE}


def div(input, other, *, rounding_mode=None, out=None):
    try:
        code = _ROUNDING[rounding_mode]
    except (KeyError, TypeError):
        raise ValueError("div expected rounding_mode to be one of None, "
                         f"'trunc', or 'floor' but found '{rounding_mode}'") from None
    if out is None:
        return wrap(_bin(code, operand(input), operand(other)))
    check(_bin_out(code, out._p, operand(input), operand(other)))
    return out


def rsub(input, other, *, alpha=1):
    return sub(other, input, alpha=alpha)


def round(input, *, decimals=0, out=None):
    if decimals == 0:
        if out is None:
            return wrap(_un(lib.TH_ROUND, input._p))
        check(_un_out(lib.TH_ROUND, out._p, input._p))
        return out
    scale = 10.0 ** decimals
    r = (input * scale).round() / scale if decimals > 0 else \
        (input / (10.0 ** -decimals)).round() * (10.0 ** -decimals)
    if out is None:
        return r
    return out.copy_(r)


def clamp(input, min=None, max=None, *, out=None):
    lo = None if min is None else operand(min)
    hi = None if max is None else operand(max)
    if lo is None and hi is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if out is None:
        return wrap(lib.th_clamp(input._p, lo or _NULL, hi or _NULL))
    check(lib.th_clamp_out(out._p, input._p, lo or _NULL, hi or _NULL))
    return out


from ._lib import NULL as _NULL  # noqa: E402


def clamp_min(input, min):
    return clamp(input, min=min)


def clamp_max(input, max):
    return clamp(input, max=max)


def lerp(input, end, weight, *, out=None):
    if out is None:
        return wrap(lib.th_lerp(input._p, end._p, _float_operand(weight, input)))
    check(lib.th_lerp_out(out._p, input._p, end._p, _float_operand(weight, input)))
    return out


def _float_operand(w, like):
    # a number weight stays a float64 wrapped number: libTH converts it to
    # the computation type (float32 for half types), not to like's dtype
    return w._p if isinstance(w, Tensor) else scalar_ptr(float(w))


def where(condition, input=None, other=None, *, out=None):
    if input is None and other is None:
        return condition.nonzero(as_tuple=True)
    if out is None:
        return wrap(lib.th_where(condition._p, operand(input), operand(other)))
    check(lib.th_where_out(out._p, condition._p, operand(input), operand(other)))
    return out


def nan_to_num(input, nan=0.0, posinf=None, neginf=None, *, out=None):
    pi = float("nan") if posinf is None else float(posinf)  # NaN: dtype's max
    ni = float("nan") if neginf is None else float(neginf)
    if out is None:
        return wrap(lib.th_nan_to_num(input._p, float(nan), pi, ni))
    check(lib.th_nan_to_num_out(out._p, input._p, float(nan), pi, ni))
    return out


def _inplace(fn):
    def inplace(self, *args, **kwargs):
        return fn(self, *args, out=self, **kwargs)
    inplace.__name__ = fn.__name__ + "_"
    return inplace


for _f in (add, sub, div, round, clamp, lerp, nan_to_num):
    _functions[_f.__name__] = _f
    setattr(Tensor, _f.__name__, _f)
    _functions[_f.__name__ + "_"] = _inplace(_f)
    setattr(Tensor, _f.__name__ + "_", _functions[_f.__name__ + "_"])
for _alias, _f in (("subtract", sub), ("divide", div), ("true_divide", div),
                   ("clip", clamp)):
    _functions[_alias] = _f
    setattr(Tensor, _alias, _f)
    setattr(Tensor, _alias + "_", _inplace(_f))
for _f in (clamp_min, clamp_max, rsub):
    _functions[_f.__name__] = _f
    setattr(Tensor, _f.__name__, _f)
Tensor.clamp_min_ = lambda self, min: clamp(self, min=min, out=self)
Tensor.clamp_max_ = lambda self, max: clamp(self, max=max, out=self)
_functions["where"] = where
Tensor.where = lambda self, condition, other: where(condition, self, other)
_functions["positive"] = lambda input: input
Tensor.positive = lambda self: self


# ---- operators: the hot path, written out for speed ------------------
_ADD, _SUB, _MUL, _DIV = lib.TH_ADD, lib.TH_SUB, lib.TH_MUL, lib.TH_DIV


def _op(code):
    def fwd(self, other):
        try:
            b = operand(other)
        except TypeError:
            return NotImplemented
        return wrap(_bin(code, self._p, b))

    def rev(self, other):
        try:
            a = operand(other)
        except TypeError:
            return NotImplemented
        return wrap(_bin(code, a, self._p))

    def inplace(self, other):
        check(_bin_out(code, self._p, self._p, operand(other)))
        return self

    return fwd, rev, inplace


for _names, _code in (
        (("add", "radd", "iadd"), lib.TH_ADD),
        (("sub", "rsub", "isub"), lib.TH_SUB),
        (("mul", "rmul", "imul"), lib.TH_MUL),
        (("truediv", "rtruediv", "itruediv"), lib.TH_DIV),
        (("floordiv", "rfloordiv", "ifloordiv"), lib.TH_FLOOR_DIVIDE),
        (("mod", "rmod", "imod"), lib.TH_REMAINDER),
        (("pow", "rpow", "ipow"), lib.TH_POW),
        (("and", "rand", "iand"), lib.TH_BITWISE_AND),
        (("or", "ror", "ior"), lib.TH_BITWISE_OR),
        (("xor", "rxor", "ixor"), lib.TH_BITWISE_XOR),
        (("lshift", "rlshift", "ilshift"), lib.TH_LSHIFT),
        (("rshift", "rrshift", "irshift"), lib.TH_RSHIFT)):
    for _n, _f in zip(_names, _op(_code)):
        setattr(Tensor, f"__{_n}__", _f)


def _add_op(self, other):
    if other.__class__ is Tensor:
        p = _bin(_ADD, self._p, other._p)
    else:
        try:
            p = _bin(_ADD, self._p, operand(other))
        except TypeError:
            return NotImplemented
    return wrap(p)


def _mul_op(self, other):
    if other.__class__ is Tensor:
        p = _bin(_MUL, self._p, other._p)
    else:
        try:
            p = _bin(_MUL, self._p, operand(other))
        except TypeError:
            return NotImplemented
    return wrap(p)


Tensor.__add__ = _add_op
Tensor.__mul__ = _mul_op


def _cmp(code):
    def op(self, other):
        try:
            b = operand(other)
        except TypeError:
            return NotImplemented
        return wrap(_bin(code, self._p, b))
    return op


Tensor.__eq__ = _cmp(lib.TH_EQ)
Tensor.__ne__ = _cmp(lib.TH_NE)
Tensor.__lt__ = _cmp(lib.TH_LT)
Tensor.__le__ = _cmp(lib.TH_LE)
Tensor.__gt__ = _cmp(lib.TH_GT)
Tensor.__ge__ = _cmp(lib.TH_GE)
Tensor.__hash__ = object.__hash__
Tensor.__neg__ = lambda self: wrap(_un(lib.TH_NEG, self._p))
Tensor.__pos__ = lambda self: self
Tensor.__abs__ = lambda self: wrap(_un(lib.TH_ABS, self._p))
Tensor.__invert__ = lambda self: wrap(_un(lib.TH_BITWISE_NOT, self._p))

functions = _functions
