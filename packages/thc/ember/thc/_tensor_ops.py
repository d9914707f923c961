"""Element-wise math on CUDA tensors: methods, in-place forms, the Python
operators and the namespace functions, all driven by libTHC's op codes
(libTH's values and semantics), defined by ember.th's
_binding_elementwise; lerp, where and nan_to_num composed here (libTHC
has no kernel for them)."""
import math

from ember.th._binding_elementwise import define_elementwise, inplace_form

from ._lib import check, lib
from ._tensor import C, Tensor, operand, scalar_ptr, wrap

functions = {}
_defined = define_elementwise(C, Tensor, functions, operand, wrap, scalar_ptr, check)
#: libTHC's op vocabulary (libTH's include/th_ops.def), read from the library
OPS = _defined["OPS"]
UNARY_OPS, BINARY_OPS = _defined["UNARY_OPS"], _defined["BINARY_OPS"]
_attach = _defined["attach"]
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


for _f in (lerp, nan_to_num):
    _attach(_f.__name__, _f, _f, inplace_form(_f))
functions["where"] = where
Tensor.where = lambda self, condition, other: where(condition, self, other)
