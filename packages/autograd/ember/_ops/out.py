"""``out=`` for the ``ember.<op>`` functions, one way for all of them.

``ember.add(a, b, out=c)`` computes the result as the function would and
writes it into ``c`` (PyTorch's rules): the result's dtype must cast to
``out``'s (float into an integer tensor is refused), ``out`` must be on the
result's device, an ``out`` of another shape is resized (with a warning when
it had elements), ops with several results take a tuple, and no argument may
require grad while grad mode is on (out= is not differentiable).  A refused
call leaves ``out`` as it was.  The result is computed first and then copied
in, so ``out`` may alias an input (``ember.add(a, b, out=a)``).
"""
import functools
import warnings

from ..autograd import grad_mode
from .._tensor import TYPE_TITLES, Tensor
from .define import DISPATCH, dispatch_point

_KIND = {"bool": 0, "uint8": 1, "int8": 1, "int16": 1, "int32": 1, "int64": 1,
         "float16": 2, "bfloat16": 2, "float32": 2, "float64": 2}


def _title(dtype):
    return TYPE_TITLES.get(dtype.name, dtype.name)


def _not_differentiable(name):
    return RuntimeError(f"{name}(): functions with out=... arguments don't support automatic "
                        "differentiation, but one of the arguments requires grad.")


def check_out(name, out):
    """The TypeError for an `out` that is no Tensor (nor a tuple or list of
    results), raised before the op runs (a random op draws nothing)."""
    if not isinstance(out, (Tensor, tuple, list)):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")


def _check_one(name, result, out):
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if not isinstance(result, Tensor):
        raise TypeError(f"{name}(): out= is given but the result is a "
                        f"{type(result).__name__}, not a Tensor")
    if _KIND.get(result.dtype.name, 3) > _KIND.get(out.dtype.name, 3):
        raise RuntimeError(f"result type {_title(result.dtype)} can't be cast to the desired "
                           f"output type {_title(out.dtype)}")
    if out.device != result.device:
        raise RuntimeError(f"Expected out tensor to have device {result.device}, but got "
                           f"{out.device} instead")
    if grad_mode.state.enabled and out.requires_grad:
        raise _not_differentiable(name)


def _write_one(result, out):
    if tuple(out.shape) != tuple(result.shape):
        if out.numel() != 0:
            warnings.warn(
                f"An output with one or more elements was resized since it had shape "
                f"{list(out.shape)}, which does not match the required output shape "
                f"{list(result.shape)}. This behavior is deprecated, and in a future release "
                "outputs will not be resized unless they have zero elements. You can "
                "explicitly reuse an out tensor t by resizing it, inplace, to zero elements "
                "with t.resize_(0).", UserWarning, stacklevel=4)
        out.resize_(result.shape)
    with grad_mode.no_grad():
        out.copy_(result)


def write_out(name, result, out):
    """Writes `result` (a tensor, or a tuple of them) into `out`; returns out."""
    if grad_mode.state.enabled and any(
            isinstance(r, Tensor) and r.requires_grad
            for r in (result if isinstance(result, tuple) else (result,))):
        raise _not_differentiable(name)
    if isinstance(result, tuple):
        if not isinstance(out, (tuple, list)) or len(out) != len(result):
            raise TypeError(f"{name}(): argument 'out' must be a tuple of {len(result)} "
                            f"Tensors, not {type(out).__name__}")
        for r, o in zip(result, out):
            _check_one(name, r, o)
        for r, o in zip(result, out):
            _write_one(r, o)
        return type(result)(*out) if hasattr(result, "_fields") else tuple(out)
    _check_one(name, result, out)
    _write_one(result, out)
    return out


def with_out(fn, name):
    """fn with an ``out=`` keyword (a dispatch point of op `name`, as fn)."""
    @functools.wraps(fn)
    def f(*args, **kwargs):
        # `out` looked up, not bound as a parameter: the call without it (the
        # common one) pays one dict test on top of the extra frame
        out = kwargs.pop("out", None) if "out" in kwargs else None
        if out is None:
            return fn(*args, **kwargs)
        check_out(name, out)
        return write_out(name, fn(*args, **kwargs), out)
    f.takes_out = True
    return dispatch_point(f, name)


def install(namespace):
    """Gives every op function of `namespace` (the dispatch points; not
    the in-place ``<op>_`` forms) an ``out=`` keyword."""
    for attr, fn in list(namespace.items()):
        hit = DISPATCH.get(id(fn))
        if hit is None or hit[0] is not fn or attr.endswith("_") or \
                getattr(fn, "takes_out", False):
            continue
        namespace[attr] = with_out(fn, hit[1])
