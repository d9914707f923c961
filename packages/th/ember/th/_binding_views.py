"""The views of ember.th's and ember.thc's tensors (view/reshape,
transpose/permute, narrow/select, expand, squeeze/unsqueeze,
flatten/unflatten, unfold, as_strided, diagonal, movedim): one definition
over a C library's view functions (libTHC's are libTH's rules, th_meta.h)."""
import numbers

from . import dtypes as _dt
from ._binding import wrap_dim


def stack_with(cat, tensors, dim, out):
    """stack as cat of the tensors unsqueezed at dim (after PyTorch's checks)."""
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    shape0 = tuple(tensors[0].shape)
    for i, t in enumerate(tensors):
        if tuple(t.shape) != shape0:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"{list(shape0)} at entry 0 and {list(t.shape)} at entry {i}")
    d = wrap_dim(dim, len(shape0) + 1)
    return cat([t.unsqueeze(d) for t in tensors], d, out=out)


def define_views(register, Tensor, C, wrap, int64_array, int_array, parse_shape):
    """Defines the views on Tensor; register(fn, names=None, method=True,
    function=True) records each in the binding's function table."""

    def view(self, *shape):
        if len(shape) == 1 and isinstance(shape[0], _dt.dtype):
            raise NotImplementedError(f"view({shape[0]!r}) (reinterpreting dtype) is not "
                                      "supported")
        s = parse_shape(shape)
        return wrap(C.view(self._p, len(s), int64_array(s)))

    def reshape(input, *shape):
        s = parse_shape(shape)
        return wrap(C.reshape(input._p, len(s), int64_array(s)))

    def view_as(self, other):
        return self.view(other.shape)

    def reshape_as(self, other):
        return self.reshape(other.shape)

    def transpose(input, dim0, dim1):
        return wrap(C.transpose(input._p, dim0, dim1))

    def permute(input, *dims):
        d = parse_shape(dims)
        return wrap(C.permute(input._p, len(d), int_array(d)))

    def t(input):
        n = input.ndim
        if n > 2:
            raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {n}D")
        return input if n < 2 else wrap(C.transpose(input._p, 0, 1))

    def narrow(input, dim, start, length):
        return wrap(C.narrow(input._p, dim, int(start), length))

    def select(input, dim, index):
        return wrap(C.select(input._p, dim, int(index)))

    def expand(self, *sizes):
        s = parse_shape(sizes)
        return wrap(C.expand(self._p, len(s), int64_array(s)))

    def expand_as(self, other):
        return self.expand(other.shape)

    def broadcast_to(input, shape):
        return input.expand(shape)

    def squeeze(input, dim=None):
        if dim is None:
            return wrap(C.squeeze_all(input._p))
        if isinstance(dim, (tuple, list)):
            out = input
            for d in sorted({wrap_dim(d, input.ndim) for d in dim}, reverse=True):
                out = wrap(C.squeeze(out._p, d))
            return out
        return wrap(C.squeeze(input._p, dim))

    def unsqueeze(input, dim):
        return wrap(C.unsqueeze(input._p, dim))

    def flatten(input, start_dim=0, end_dim=-1):
        n = input.ndim
        if n == 0:
            return input.reshape(1)
        s, e = wrap_dim(start_dim, n), wrap_dim(end_dim, n)
        if s > e:
            raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
        shape = list(input.shape)
        merged = 1
        for k in shape[s:e + 1]:
            merged *= k
        return input.reshape(shape[:s] + [merged] + shape[e + 1:])

    def unflatten(input, dim, sizes):
        d = wrap_dim(dim, input.ndim)
        shape = list(input.shape)
        return input.view(shape[:d] + list(sizes) + shape[d + 1:])

    def unfold(self, dimension, size, step):
        return wrap(C.unfold(self._p, dimension, size, step))

    def as_strided(input, size, stride, storage_offset=None):
        size, stride = list(size), list(stride)
        if len(size) != len(stride):
            raise RuntimeError("mismatch in length of strides and shape")
        off = input.storage_offset() if storage_offset is None else int(storage_offset)
        if off < 0:
            raise RuntimeError(f"Tensor: invalid storage offset {off}")
        return wrap(C.as_strided(input._p, len(size), int64_array(size), int64_array(stride),
                                 off))

    def diagonal(input, offset=0, dim1=0, dim2=1):
        return wrap(C.diagonal(input._p, offset, dim1, dim2))

    def movedim(input, source, destination):
        n = input.ndim
        src = [source] if isinstance(source, numbers.Integral) else list(source)
        dst = [destination] if isinstance(destination, numbers.Integral) else list(destination)
        if len(src) != len(dst):
            raise RuntimeError(f"movedim: Invalid source or destination dims: source "
                               f"({src} dims) should contain the same number of dims "
                               f"as destination ({dst} dims)")
        src = [wrap_dim(d, n) for d in src]
        dst = [wrap_dim(d, n) for d in dst]
        for name, dims in (("source", src), ("destination", dst)):
            if len(set(dims)) != len(dims):
                raise RuntimeError(f"movedim: repeated dim in `{name}` ({dims})")
        order = [None] * n
        for s, d in zip(src, dst):
            order[d] = s
        rest = iter(d for d in range(n) if d not in src)
        return input.permute([o if o is not None else next(rest) for o in order])

    for fn in (view, view_as, reshape_as, expand, expand_as, unfold):
        register(fn, function=False)
    for fn in (reshape, permute, t, narrow, select, broadcast_to, squeeze, unsqueeze,
               flatten, unflatten, as_strided, diagonal):
        register(fn)
    register(transpose, ("transpose", "swapaxes", "swapdims"))
    register(movedim, ("movedim", "moveaxis"))
    Tensor.T = property(lambda self: self.permute(*reversed(range(self.ndim))))
    Tensor.mT = property(lambda self: self.transpose(-2, -1))
