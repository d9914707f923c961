"""Views (sharing storage) and copies: view/reshape, transpose/permute,
narrow/select, expand, squeeze/unsqueeze, flatten/unflatten, unfold,
as_strided, diagonal, movedim, contiguous/clone."""
import numbers

from ._core import Tensor, _wrap_dim, int64_array, int_array, parse_shape, wrap
from ._lib import check, lib

_functions = {}


def _register(*names, method=True, function=True):
    def deco(fn):
        for n in names or (fn.__name__,):
            if method:
                setattr(Tensor, n, fn)
            if function:
                _functions[n] = fn
        return fn
    return deco


@_register(function=False)
def view(self, *shape):
    if len(shape) == 1 and not isinstance(shape[0], numbers.Integral) and \
            not isinstance(shape[0], (tuple, list)) and shape[0] is not None:
        dt = shape[0]  # view(dtype) reinterprets bytes: not supported
        raise NotImplementedError(f"view({dt!r}) (reinterpreting dtype) is not supported")
    s = parse_shape(shape)
    return wrap(lib.th_view(self._p, len(s), int64_array(s)))


@_register()
def reshape(input, *shape):
    s = parse_shape(shape)
    return wrap(lib.th_reshape(input._p, len(s), int64_array(s)))


@_register(function=False)
def view_as(self, other):
    return self.view(other.shape)


@_register(function=False)
def reshape_as(self, other):
    return self.reshape(other.shape)


@_register("transpose", "swapaxes", "swapdims")
def transpose(input, dim0, dim1):
    return wrap(lib.th_transpose(input._p, dim0, dim1))


@_register()
def permute(input, *dims):
    d = parse_shape(dims)
    return wrap(lib.th_permute(input._p, len(d), int_array(d)))


@_register()
def t(input):
    n = input.ndim
    if n > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {n}D")
    return input if n < 2 else wrap(lib.th_transpose(input._p, 0, 1))


Tensor.T = property(lambda self: self.permute(*reversed(range(self.ndim))))
Tensor.mT = property(lambda self: self.transpose(-2, -1))


@_register()
def narrow(input, dim, start, length):
    return wrap(lib.th_narrow(input._p, dim, int(start), length))


@_register()
def select(input, dim, index):
    return wrap(lib.th_select(input._p, dim, int(index)))


@_register(function=False)
def expand(self, *sizes):
    s = parse_shape(sizes)
    return wrap(lib.th_expand(self._p, len(s), int64_array(s)))


@_register(function=False)
def expand_as(self, other):
    return self.expand(other.shape)


@_register()
def broadcast_to(input, shape):
    return input.expand(shape)


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


@_register()
def squeeze(input, dim=None):
    if dim is None:
        return wrap(lib.th_squeeze_all(input._p))
    if isinstance(dim, (tuple, list)):
        dims = sorted({_wrap_dim(d, input.ndim) for d in dim}, reverse=True)
        out = input
        for d in dims:
            out = wrap(lib.th_squeeze(out._p, d))
        return out
    return wrap(lib.th_squeeze(input._p, dim))


@_register()
def unsqueeze(input, dim):
    return wrap(lib.th_unsqueeze(input._p, dim))


@_register()
def flatten(input, start_dim=0, end_dim=-1):
    n = input.ndim
    if n == 0:
        return input.reshape(1)
    s, e = _wrap_dim(start_dim, n), _wrap_dim(end_dim, n)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    shape = list(input.shape)
    merged = 1
    for n in shape[s:e + 1]:
        merged *= n
    return input.reshape(shape[:s] + [merged] + shape[e + 1:])


@_register()
def unflatten(input, dim, sizes):
    d = _wrap_dim(dim, input.ndim)
    shape = list(input.shape)
    return input.view(shape[:d] + list(sizes) + shape[d + 1:])


@_register(function=False)
def unfold(self, dimension, size, step):
    return wrap(lib.th_unfold(self._p, dimension, size, step))


@_register()
def as_strided(input, size, stride, storage_offset=None):
    size, stride = list(size), list(stride)
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape")
    if storage_offset is None:
        off = input.storage_offset()
    else:
        off = int(storage_offset)
        if off < 0:
            raise RuntimeError(f"Tensor: invalid storage offset {off}")
    return wrap(lib.th_as_strided(input._p, len(size), int64_array(size),
                                  int64_array(stride), off))


@_register()
def diagonal(input, offset=0, dim1=0, dim2=1):
    return wrap(lib.th_diagonal(input._p, offset, dim1, dim2))


@_register("movedim", "moveaxis")
def movedim(input, source, destination):
    n = input.ndim
    src = [source] if isinstance(source, numbers.Integral) else list(source)
    dst = [destination] if isinstance(destination, numbers.Integral) else list(destination)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source "
                           f"({src} dims) should contain the same number of dims "
                           f"as destination ({dst} dims)")
    src = [_wrap_dim(d, n) for d in src]
    dst = [_wrap_dim(d, n) for d in dst]
    for name, dims in (("source", src), ("destination", dst)):
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({dims})")
    order = [None] * n
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(d for d in range(n) if d not in src)
    order = [o if o is not None else next(rest) for o in order]
    return input.permute(order)


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
