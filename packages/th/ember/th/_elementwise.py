"""Element-wise math: functions, Tensor methods, in-place forms and the
Python operators, all driven by libTH's op codes (defined by
_binding_elementwise, which ember.thc shares), plus libTH's lerp, where
and nan_to_num kernels."""
from ._binding_elementwise import (BINARY_ALIASES, UNARY_ALIASES,  # noqa: F401
                                   define_elementwise, inplace_form)
from ._core import C, Tensor, operand, scalar_ptr, wrap
from ._lib import check, lib

functions = {}
_defined = define_elementwise(C, Tensor, functions, operand, wrap, scalar_ptr, check)
#: libTH's op vocabulary (include/th_ops.def), read from the library
OPS = _defined["OPS"]
UNARY_OPS, BINARY_OPS = _defined["UNARY_OPS"], _defined["BINARY_OPS"]
_attach = _defined["attach"]


def _float_operand(w):
    # a number weight stays a float64 wrapped number: libTH converts it to
    # the computation type (float32 for half types), not to input's dtype
    return w._p if isinstance(w, Tensor) else scalar_ptr(float(w))


def lerp(input, end, weight, *, out=None):
    if out is None:
        return wrap(lib.th_lerp(input._p, end._p, _float_operand(weight)))
    check(lib.th_lerp_out(out._p, input._p, end._p, _float_operand(weight)))
    return out


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


for _f in (lerp, nan_to_num):
    _attach(_f.__name__, _f, _f, inplace_form(_f))
functions["where"] = where
Tensor.where = lambda self, condition, other: where(condition, self, other)
