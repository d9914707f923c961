"""Element-wise math on CUDA tensors: methods, in-place forms, the Python
operators and the namespace functions, all driven by libTHC's op codes
(libTH's values and semantics)."""
import math

from ember.th._vocabulary import codes as _codes, read_ops

from ._lib import check, ffi, lib
from ._tensor import NULL, Tensor, operand, scalar_ptr, wrap

_bin = lib.thc_binary
_bin_out = lib.thc_binary_out
_un = lib.thc_unary
_un_out = lib.thc_unary_out

#: libTHC's op vocabulary (libTH's include/th_ops.def), read from the library
OPS = read_ops(ffi, lib, "thc")
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
                  "not_equal": "ne"}

functions = {}


def _make_unary(code):
    def fn(input, *, out=None):
        if out is None:
            return wrap(_un(code, input._p))
        check(_un_out(code, out._p, input._p))
        return out

    def inplace(self):
        check(_un_out(code, self._p, self._p))
        return self

    return fn, inplace


def _make_binary(code):
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

    return fn, method, inplace


def _attach(name, function, method, inplace=None):
    function.__name__ = method.__name__ = name
    functions[name] = function
    setattr(Tensor, name, method)
    if inplace is not None:
        inplace.__name__ = name + "_"
        functions[name + "_"] = inplace
        setattr(Tensor, name + "_", inplace)


for _name, _code in UNARY_OPS.items():
    _f, _fi = _make_unary(_code)
    _attach(_name, _f, _f, None if _name in _NO_INPLACE else _fi)
for _name, _code in BINARY_OPS.items():
    _attach(_name, *_make_binary(_code))
for _aliases in (UNARY_ALIASES, BINARY_ALIASES):
    for _alias, _target in _aliases.items():
        functions[_alias] = functions[_target]
        setattr(Tensor, _alias, getattr(Tensor, _target))
        setattr(Tensor, _alias + "_", getattr(Tensor, _target + "_"))


# ---- ops with extra arguments ----------------------------------------
def _binary_into(code, a, b, out):
    if out is None:
        return wrap(_bin(code, a, b))
    check(_bin_out(code, out._p, a, b))
    return out


def _scaled_into(a, b, alpha, out):
    if out is None:
        return wrap(lib.thc_add_scaled(a, b, scalar_ptr(alpha)))
    check(lib.thc_add_scaled_out(out._p, a, b, scalar_ptr(alpha)))
    return out


def add(input, other, *, alpha=1, out=None):
    a, b = operand(input), operand(other)
    if alpha == 1:
        return _binary_into(lib.THC_ADD, a, b, out)
    return _scaled_into(a, b, alpha, out)


def sub(input, other, *, alpha=1, out=None):
    a, b = operand(input), operand(other)
    if alpha == 1 or (a.dtype == lib.THC_BOOL and b.dtype == lib.THC_BOOL):
        return _binary_into(lib.THC_SUB, a, b, out)  # bools: raises the bool message
    return _scaled_into(a, b, -alpha, out)


_ROUNDING = {None: lib.THC_DIV, "trunc": lib.THC_TRUNC_DIVIDE,
             "floor": lib.THC_FLOOR_DIVIDE}


def div(input, other, *, rounding_mode=None, out=None):
    try:
        code = _ROUNDING[rounding_mode]
    except (KeyError, TypeError):
        raise ValueError("div expected rounding_mode to be one of None, "
                         f"'trunc', or 'floor' but found '{rounding_mode}'") from None
    return _binary_into(code, operand(input), operand(other), out)


def rsub(input, other, *, alpha=1):
    return sub(other, input, alpha=alpha)


def round(input, *, decimals=0, out=None):
    if decimals == 0:
        if out is None:
            return wrap(_un(lib.THC_ROUND, input._p))
        check(_un_out(lib.THC_ROUND, out._p, input._p))
        return out
    # ember.th's composition, so both libraries round alike
    if decimals > 0:
        scale = 10.0 ** decimals
        r = (input * scale).round() / scale
    else:
        scale = 10.0 ** -decimals
        r = (input / scale).round() * scale
    return r if out is None else out.copy_(r)


def clamp(input, min=None, max=None, *, out=None):
    lo = NULL if min is None else operand(min)
    hi = NULL if max is None else operand(max)
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if out is None:
        return wrap(lib.thc_clamp(input._p, lo, hi))
    check(lib.thc_clamp_out(out._p, input._p, lo, hi))
    return out


def clamp_min(input, min):
    return clamp(input, min=min)


def clamp_max(input, max):
    return clamp(input, max=max)


_HALF = {lib.THC_FLOAT16, lib.THC_BFLOAT16}


def lerp(input, end, weight, *, out=None):
    """input + weight * (end - input), with libTH's formula (exact at both
    ends) and its float32 computation for half types; composed from
    element-wise ops (libTHC has no lerp kernel)."""
    if not input.dtype.is_floating_point or input.dtype is not end.dtype:
        raise RuntimeError("lerp: expected floating tensors of the same dtype for start "
                           f"and end, but got {input.dtype._title} and {end.dtype._title}")
    dtype = input.dtype
    half = dtype.code in _HALF
    x, y = (input.float(), end.float()) if half else (input, end)
    diff = y - x
    if isinstance(weight, Tensor):
        w = weight.to(x.dtype)
        r = where((w.abs() < 0.5), x + w * diff, y - diff * (1 - w))
    else:
        w = float(weight)
        r = x + diff * w if math.fabs(w) < 0.5 else y - diff * (1 - w)
    if half:
        r = r.to(dtype)
    return r if out is None else out.copy_(r)


def where(condition, input=None, other=None, *, out=None):
    if input is None and other is None:
        return condition.nonzero(as_tuple=True)
    r = wrap(lib.thc_where(operand(condition), operand(input), operand(other)))
    return r if out is None else out.copy_(r)


def nan_to_num(input, nan=0.0, posinf=None, neginf=None, *, out=None):
    """NaN -> nan, +inf -> posinf, -inf -> neginf (the dtype's largest and
    lowest finite values by default); composed from where()."""
    if not input.dtype.is_floating_point:
        r = input.clone()
    else:
        info = _finfo(input.dtype)
        hi = info[0] if posinf is None else float(posinf)
        lo = -info[0] if neginf is None else float(neginf)
        r = where(input.isnan(), float(nan), input)
        r = where(r.isposinf(), hi, r)
        r = where(r.isneginf(), lo, r)
        r = r.to(input.dtype)
    return r if out is None else out.copy_(r)


def _finfo(dtype):
    import numpy as np
    if dtype.name == "bfloat16":
        return (3.3895313892515355e38,)
    return (float(np.finfo(dtype.numpy).max),)


def _inplace(fn):
    def inplace(self, *args, **kwargs):
        return fn(self, *args, out=self, **kwargs)
    inplace.__name__ = fn.__name__ + "_"
    return inplace


for _f in (add, sub, div, round, clamp, lerp, nan_to_num):
    _attach(_f.__name__, _f, _f, _inplace(_f))
for _alias, _f in (("subtract", sub), ("divide", div), ("true_divide", div),
                   ("clip", clamp)):
    functions[_alias] = _f
    setattr(Tensor, _alias, _f)
    setattr(Tensor, _alias + "_", _inplace(_f))
for _f in (clamp_min, clamp_max, rsub):
    _attach(_f.__name__, _f, _f)
Tensor.clamp_min_ = lambda self, min: clamp(self, min=min, out=self)
Tensor.clamp_max_ = lambda self, max: clamp(self, max=max, out=self)
functions["where"] = where
Tensor.where = lambda self, condition, other: where(condition, self, other)
functions["positive"] = lambda input: input
Tensor.positive = lambda self: self


# ---- operators -------------------------------------------------------
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
        (("add", "radd", "iadd"), lib.THC_ADD),
        (("sub", "rsub", "isub"), lib.THC_SUB),
        (("mul", "rmul", "imul"), lib.THC_MUL),
        (("truediv", "rtruediv", "itruediv"), lib.THC_DIV),
        (("floordiv", "rfloordiv", "ifloordiv"), lib.THC_FLOOR_DIVIDE),
        (("mod", "rmod", "imod"), lib.THC_REMAINDER),
        (("pow", "rpow", "ipow"), lib.THC_POW),
        (("and", "rand", "iand"), lib.THC_BITWISE_AND),
        (("or", "ror", "ior"), lib.THC_BITWISE_OR),
        (("xor", "rxor", "ixor"), lib.THC_BITWISE_XOR),
        (("lshift", "rlshift", "ilshift"), lib.THC_LSHIFT),
        (("rshift", "rrshift", "irshift"), lib.THC_RSHIFT)):
    for _n, _f in zip(_names, _op(_code)):
        setattr(Tensor, f"__{_n}__", _f)

for _n, _code in (("eq", lib.THC_EQ), ("ne", lib.THC_NE), ("lt", lib.THC_LT),
                  ("le", lib.THC_LE), ("gt", lib.THC_GT), ("ge", lib.THC_GE)):
    setattr(Tensor, f"__{_n}__", _op(_code)[0])
Tensor.__hash__ = object.__hash__
Tensor.__neg__ = lambda self: wrap(_un(lib.THC_NEG, self._p))
Tensor.__pos__ = lambda self: self
Tensor.__abs__ = lambda self: wrap(_un(lib.THC_ABS, self._p))
Tensor.__invert__ = lambda self: wrap(_un(lib.THC_BITWISE_NOT, self._p))
