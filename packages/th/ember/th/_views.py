"""Views (sharing storage) and copies: the views of ember.th._binding_views
(view/reshape, transpose/permute, narrow/select, expand, squeeze/unsqueeze,
flatten/unflatten, unfold, as_strided, diagonal, movedim) on libTH,
broadcasting, contiguous/clone."""
import numbers

from ._binding import decorator, registrar
from ._binding_views import define_views
from ._core import C, Tensor, int64_array, int_array, parse_shape, wrap
from ._lib import check, lib

_functions = {}
_add = registrar(Tensor, _functions)
_register = decorator(_add)


define_views(_add, Tensor, C, wrap, int64_array, int_array, parse_shape)


def broadcast_shapes(*shapes):
    out = []
    for s in shapes:
        s = [s] if isinstance(s, numbers.Integral) else list(s)
        res = [0] * max(len(out), len(s))
        a = [1] * (len(res) - len(out)) + out
        b = [1] * (len(res) - len(s)) + s
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y and x != 1 and y != 1:
                raise RuntimeError(f"Shape mismatch: objects cannot be broadcast to a single shape.  "
                                   f"Mismatch is between arg 0 and arg 1.")
            res[i] = y if x == 1 else x
        out = res
    from ._core import Size
    return Size(out)


def broadcast_tensors(*tensors):
    shape = broadcast_shapes(*(t.shape for t in tensors))
    return tuple(t.expand(shape) for t in tensors)


_functions["broadcast_shapes"] = broadcast_shapes
_functions["broadcast_tensors"] = broadcast_tensors


@_register(function=False)
def contiguous(self, memory_format=None):
    p = lib.th_contiguous(self._p)
    if p == self._p:
        lib.th_tensor_release(p)
        return self
    return wrap(p)


@_register()
def clone(input, *, memory_format=None):
    return wrap(lib.th_clone(input._p))


@_register(function=False)
def copy_(self, src, non_blocking=False):
    from ._core import operand
    check(lib.th_copy(self._p, operand(src)))
    return self


@_register(function=False)
def fill_(self, value):
    from ._core import operand
    check(lib.th_fill(self._p, operand(value)))
    return self


@_register(function=False)
def zero_(self):
    check(lib.th_zero(self._p))
    return self


@_register("detach", function=False)
def detach(self):
    return wrap(lib.th_alias(self._p))


functions = _functions
