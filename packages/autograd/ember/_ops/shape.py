"""Views and shaping: view/reshape, transpose/permute, narrow/select,
expand, squeeze/unsqueeze, diagonal, unfold, as_strided, flip/roll/repeat,
tril/triu, and joining and splitting (cat/stack/split/chunk/unbind).

Views share storage with their input and remember their base (``_base``),
so that in-place changes through a view reach the base's history."""
import numbers

from .._creation import arange, zeros
from .._tensor import Tensor
from ..autograd import grad_mode
from ..autograd.nodes import check_inplace
from .define import NAMESPACE, dispatch_point, op, register, tensor_args_checked
from .samples import S, T


def _shape_args(shape):
    """view(2, 3), view((2, 3)) and view([2, 3]) alike, as a tuple."""
    if len(shape) == 1 and not isinstance(shape[0], numbers.Integral):
        shape = shape[0]
    return tuple(int(s) for s in shape)


def _wrap_dim(dim, ndim):
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-n}, {n - 1}], but got {dim})")
    return dim % n


# ---- writing a gradient back into a view's place -----------------------------
class _ViewOf:
    """Re-applies a view (narrow, select, indexing, ...) to a raw or an
    ember tensor: what a view's backward writes through."""

    __slots__ = ("method", "args", "raw_args")

    def __init__(self, method, *args, raw_args=None):
        self.method = method
        self.args = args
        self.raw_args = args if raw_args is None else raw_args

    def __call__(self, t):
        args = self.args if isinstance(t, Tensor) else self.raw_args
        return getattr(t, self.method)(*args)


@op(function=False, method=False, node_name="ViewScatterBackward0")
class _view_scatter:
    """Zeros of `shape` with g in the positions of view `view_of` (summed
    where the view repeats positions, when `overlapping`)."""

    def forward(g, shape, view_of, overlapping):
        z = zeros(shape, dtype=g.dtype, device=g.device)._data
        if not overlapping:
            view_of(z).copy_(g._data)
            return z
        numel = z.numel()
        positions = view_of(arange(numel, device=g.device)._data.view(shape))
        z.view(-1).index_add_(0, positions.reshape(-1), g._data.reshape(-1))
        return z

    def save(out, g, shape, view_of, overlapping):
        return (view_of,)

    def backward(gg, view_of):
        return view_of(gg)


def view_scatter(g, shape, view_of, overlapping=False):
    return _view_scatter(g, tuple(shape), view_of, overlapping)


# ---- views -----------------------------------------------------------------
@op(function=False, view=True)
class view:
    """The same data with another shape (no copy; -1 is inferred)."""

    def forward(input, *shape):
        if len(shape) == 1 and not isinstance(shape[0], (numbers.Integral, tuple, list)) \
                and shape[0] is not None and not isinstance(shape[0], Tensor):
            raise NotImplementedError(f"view({shape[0]!r}) (reinterpreting the dtype) is "
                                      "not supported")
        return input._data.view(*shape)

    def save(out, input, *shape):
        return (input.shape,)

    def backward(g, shape):
        return g.reshape(shape)

    samples = [S(T(3, 4), 2, 6), S(T(3, 4), (-1,)), S(T(2, 3, 2), [6, 2]), S(T(), 1)]


@op(function=False, method=False, node_name="UnsafeViewBackward0")
class _reshape_copy:
    def forward(input, shape):
        return input._data.reshape(shape)

    def save(out, input, shape):
        return (input.shape,)

    def backward(g, shape):
        return g.reshape(shape)


def reshape(input, *shape):
    """view() when the layout allows it, else a copy."""
    shape = _shape_args(shape)
    if input._data.is_contiguous():
        return view(input, shape)
    try:
        return view(input, shape)
    except RuntimeError:
        return _reshape_copy(input, shape)


register("reshape", function=reshape, method=reshape,
         samples=[S(T(3, 4), (2, 6)), S(T(3, 4), (-1,)), S(T(2, 3, 2), [6, 2])])
Tensor.view_as = dispatch_point(
    tensor_args_checked("view_as", lambda self, other: view(self, other.shape)), "view_as")
Tensor.reshape_as = tensor_args_checked("reshape_as",
                                        lambda self, other: reshape(self, other.shape))


def flatten(input, start_dim=0, end_dim=-1):
    n = input.ndim
    if n == 0:
        return reshape(input, 1)
    s, e = _wrap_dim(start_dim, n), _wrap_dim(end_dim, n)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    shape = list(input.shape)
    return reshape(input, shape[:s] + [-1 if 0 not in shape[s:e + 1] else 0] + shape[e + 1:])


def unflatten(input, dim, sizes):
    d = _wrap_dim(dim, input.ndim)
    shape = list(input.shape)
    return view(input, shape[:d] + list(sizes) + shape[d + 1:])


register("flatten", function=flatten, method=flatten,
         samples=[S(T(2, 3, 2)), S(T(2, 3, 2), 1), S(T(2, 3, 2), 0, 1)])
register("unflatten", function=unflatten, method=unflatten, samples=[S(T(3, 4), 1, (2, 2))])


@op(view=True, aliases=("swapaxes", "swapdims"))
class transpose:
    """Swaps two dims (a view)."""

    def forward(input, dim0, dim1):
        return input._data.transpose(dim0, dim1)

    def save(out, input, dim0, dim1):
        return (dim0, dim1)

    def backward(g, dim0, dim1):
        return g.transpose(dim0, dim1)

    samples = [S(T(3, 4), 0, 1), S(T(2, 3, 2), -1, 0)]


@op(view=True)
class t:
    """Transpose of a tensor of at most 2 dims (a view)."""

    def forward(input):
        return input._data.t()

    def backward(g):
        return g.t()

    samples = [S(T(3, 4)), S(T(4))]


@op(view=True)
class permute:
    """Reorders the dims (a view)."""

    def forward(input, *dims):
        return input._data.permute(*dims)

    def save(out, input, *dims):
        n = input.ndim
        order = [_wrap_dim(d, n) for d in _shape_args(dims)]
        inverse = [0] * n
        for i, d in enumerate(order):
            inverse[d] = i
        return (inverse,)

    def backward(g, inverse):
        return g.permute(inverse)

    samples = [S(T(2, 3, 4), (2, 0, 1)), S(T(2, 3, 4), (1, -1, 0))]


Tensor.T = property(lambda self: permute(self, list(reversed(range(self.ndim)))))
Tensor.mT = property(lambda self: transpose(self, -2, -1))
# the conjugate transposes: the transposes themselves for real tensors
Tensor.H = property(lambda self: self.T.conj() if self.is_complex() else self.T)
Tensor.mH = property(lambda self: self.mT.conj() if self.is_complex() else self.mT)
Tensor.adjoint = lambda self: self.mH


def movedim(input, source, destination):
    n = input.ndim
    src = [source] if isinstance(source, numbers.Integral) else list(source)
    dst = [destination] if isinstance(destination, numbers.Integral) else list(destination)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({src} dims) "
                           f"should contain the same number of dims as destination ({dst} "
                           "dims)")
    src = [_wrap_dim(d, n) for d in src]
    dst = [_wrap_dim(d, n) for d in dst]
    for name, dims in (("source", src), ("destination", dst)):
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({dims})")
    order = [None] * n
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(d for d in range(n) if d not in src)
    return permute(input, [o if o is not None else next(rest) for o in order])


register("movedim", function=movedim, method=movedim, aliases=("moveaxis",),
         samples=[S(T(2, 3, 4), 0, 2), S(T(2, 3, 4), (0, 1), (2, 0))])


@op(view=True)
class narrow:
    """`length` elements of dim from `start` (a view)."""

    def forward(input, dim, start, length):
        return input._data.narrow(dim, int(start), length)

    def save(out, input, dim, start, length):
        return (input.shape, _ViewOf("narrow", dim, int(start), length))

    def backward(g, shape, view_of):
        return view_scatter(g, shape, view_of)

    samples = [S(T(4, 3), 0, 1, 2), S(T(4, 3), -1, 0, 2)]


@op(view=True)
class select:
    """The slice at `index` of dim, without that dim (a view)."""

    def forward(input, dim, index):
        return input._data.select(dim, int(index))

    def save(out, input, dim, index):
        return (input.shape, _ViewOf("select", dim, int(index)))

    def backward(g, shape, view_of):
        return view_scatter(g, shape, view_of)

    samples = [S(T(4, 3), 0, 1), S(T(4, 3), 1, -1)]


@op(view=True)
class diagonal:
    """The diagonal of two dims, as the last dim (a view)."""

    def forward(input, offset=0, dim1=0, dim2=1):
        return input._data.diagonal(offset, dim1, dim2)

    def save(out, input, offset=0, dim1=0, dim2=1):
        return (input.shape, _ViewOf("diagonal", offset, dim1, dim2))

    def backward(g, shape, view_of):
        return view_scatter(g, shape, view_of)

    samples = [S(T(3, 4)), S(T(3, 4), 1), S(T(2, 3, 3), -1, 1, 2)]


@op(function=False, view=True)
class expand:
    """Repeats size-1 dims without copying (a view with stride 0)."""

    def forward(input, *sizes):
        return input._data.expand(*sizes)

    def save(out, input, *sizes):
        return (input.shape,)

    def backward(g, shape):
        return g.sum_to_size(shape)

    samples = [S(T(3, 1), 3, 4), S(T(4), (2, 3, 4)), S(T(), 2, 2), S(T(3, 1), -1, 2)]


Tensor.expand_as = dispatch_point(
    tensor_args_checked("expand_as", lambda self, other: expand(self, other.shape)), "expand_as")


def broadcast_to(input, shape):
    return expand(input, tuple(shape))


register("broadcast_to", function=broadcast_to, method=broadcast_to,
         samples=[S(T(3, 1), (3, 4))])


def broadcast_shapes(*shapes):
    out = []
    for s in shapes:
        s = [s] if isinstance(s, numbers.Integral) else list(s)
        n = max(len(out), len(s))
        a = [1] * (n - len(out)) + out
        b = [1] * (n - len(s)) + s
        for x, y in zip(a, b):
            if x != y and x != 1 and y != 1:
                raise RuntimeError("shape mismatch: objects cannot be broadcast to a single "
                                   "shape")
        out = [y if x == 1 else x for x, y in zip(a, b)]
    from .._device import cpu_namespace
    return cpu_namespace().Size(out)


def broadcast_tensors(*tensors):
    shape = broadcast_shapes(*(t.shape for t in tensors))
    return tuple(expand(t, shape) for t in tensors)


NAMESPACE["broadcast_shapes"] = broadcast_shapes
register("broadcast_tensors", function=broadcast_tensors,
         samples=[S(T(3, 1), T(4)), S(T(2, 1, 3), T(4, 1))])


@op(view=True)
class squeeze:
    """Drops size-1 dims (all, or those given)."""

    def forward(input, dim=None):
        return input._data.squeeze(dim)

    def save(out, input, dim=None):
        return (input.shape,)

    def backward(g, shape):
        return g.reshape(shape)

    samples = [S(T(3, 1, 4, 1)), S(T(3, 1, 4), 1), S(T(3, 1, 1), (1, 2)), S(T(3, 4), 0)]


@op(view=True)
class unsqueeze:
    """Inserts a size-1 dim."""

    def forward(input, dim):
        return input._data.unsqueeze(dim)

    def save(out, input, dim):
        return (input.shape,)

    def backward(g, shape):
        return g.reshape(shape)

    samples = [S(T(3, 4), 0), S(T(3, 4), -1), S(T(), 0)]


@op(function=False, view=True)
class unfold:
    """Sliding windows of `size` every `step` along `dimension`, as a new
    last dim (a view whose windows may overlap)."""

    def forward(input, dimension, size, step):
        return input._data.unfold(dimension, size, step)

    def save(out, input, dimension, size, step):
        return (input.shape, _ViewOf("unfold", dimension, size, step))

    def backward(g, shape, view_of):
        return view_scatter(g, shape, view_of, overlapping=True)

    samples = [S(T(7), 0, 3, 2), S(T(3, 5), 1, 2, 1)]


@op(view=True, contiguous_only=True)
class as_strided:
    """A view with explicit sizes, strides and storage offset."""

    def forward(input, size, stride, storage_offset=None):
        return input._data.as_strided(size, stride, storage_offset)

    def save(out, input, size, stride, storage_offset=None):
        d = input._data
        if not d.is_contiguous():
            raise NotImplementedError("as_strided on a non-contiguous tensor that requires "
                                      "grad is not supported; call .contiguous() first")
        offset = 0 if storage_offset is None else storage_offset - d.storage_offset()
        return (input.shape, _ContiguousStrided(tuple(size), tuple(stride), offset))

    def backward(g, shape, view_of):
        return view_scatter(g, shape, view_of, overlapping=True)

    samples = [S(T(3, 4), (2, 2), (4, 1), 1), S(T(6), (3, 2), (1, 1))]


class _ContiguousStrided(_ViewOf):
    """as_strided relative to a contiguous layout of the tensor."""

    __slots__ = ()

    def __init__(self, size, stride, offset):
        super().__init__("as_strided", size, stride, offset)

    def __call__(self, t):
        return t.contiguous().as_strided(*self.args)


# ---- copies ---------------------------------------------------------------
@op()
class clone:
    """A copy with its own storage."""

    def forward(input, *, memory_format=None):
        return input._data.clone()

    def backward(g):
        return g

    samples = [S(T(3, 4))]


@op(function=False, method=False, node_name="CloneBackward0")
class _contiguous_copy:
    def forward(input):
        return input._data.contiguous()

    def backward(g):
        return g


def contiguous(self, memory_format=None):
    """self if already contiguous, else a contiguous copy."""
    return self if self._data.is_contiguous() else _contiguous_copy(self)


register("contiguous", method=contiguous, samples=[S(T(3, 4))])


@op()
class flip:
    """Reverses the order along dims."""

    def forward(input, *dims):  # flip(0, 1), flip((0, 1)) and flip([0, 1]) alike
        return input._data.flip(_shape_args(dims))

    def save(out, input, *dims):
        return (_shape_args(dims),)

    def backward(g, dims):
        return g.flip(dims)

    samples = [S(T(3, 4), (0,)), S(T(3, 4), [0, 1]), S(T(3, 4), (-1,))]


def fliplr(input):
    if input.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, [1])


def flipud(input):
    if input.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, [0])


register("fliplr", function=fliplr, method=fliplr, samples=[S(T(3, 4))])
register("flipud", function=flipud, method=flipud, samples=[S(T(3, 4))])


@op()
class roll:
    """Rotates elements along dims (the flattened tensor without dims)."""

    def forward(input, shifts, dims=None):
        return input._data.roll(shifts, dims)

    def save(out, input, shifts, dims=None):
        neg = -shifts if isinstance(shifts, numbers.Integral) else [-s for s in shifts]
        return (neg, dims)

    def backward(g, neg, dims):
        return g.roll(neg, dims)

    samples = [S(T(3, 4), 1, 0), S(T(3, 4), (1, -2), (0, 1)), S(T(3, 4), 5)]


@op(function=False)
class repeat:
    """Tiles the tensor `sizes` times along each dim (copying)."""

    def forward(input, *sizes):
        return input._data.repeat(*sizes)

    def save(out, input, *sizes):
        return (input.shape, _shape_args(sizes))

    def backward(g, shape, reps):
        lead = len(reps) - len(shape)
        padded = (1,) * lead + tuple(shape)
        split = []
        for r, s in zip(reps, padded):
            split += [r, s]
        g = g.reshape(split).sum(list(range(0, 2 * len(reps), 2)))
        return g.reshape(shape)

    samples = [S(T(2, 3), 2, 1), S(T(3), 2, 2), S(T(2, 1), (1, 3))]


def tile(input, *dims):  # tile(2, 3), tile((2, 3)) and tile([2, 3]) alike
    dims = list(_shape_args(dims))
    if len(dims) < input.ndim:
        dims = [1] * (input.ndim - len(dims)) + dims
    return repeat(input, dims)


register("tile", function=tile, method=tile, samples=[S(T(2, 3), (2,)), S(T(3), (2, 2))])


@op()
class tril:
    """Lower triangle (elements above diagonal `diagonal` zeroed)."""

    def forward(input, diagonal=0):
        return input._data.tril(diagonal)

    def save(out, input, diagonal=0):
        return (diagonal,)

    def backward(g, k):
        return g.tril(k)

    def inplace(input, diagonal=0):
        input._data.copy_(input._data.tril(diagonal))

    samples = [S(T(3, 4)), S(T(3, 4), 1), S(T(2, 3, 3), -1)]


@op()
class triu:
    """Upper triangle (elements below diagonal `diagonal` zeroed)."""

    def forward(input, diagonal=0):
        return input._data.triu(diagonal)

    def save(out, input, diagonal=0):
        return (diagonal,)

    def backward(g, k):
        return g.triu(k)

    def inplace(input, diagonal=0):
        input._data.copy_(input._data.triu(diagonal))

    samples = [S(T(3, 4)), S(T(3, 4), -1)]


@op(function=False, method=False, node_name="SumToSizeBackward0")
class _sum_to_size:
    def forward(input, shape):
        d = input._data
        lead = d.dim() - len(shape)
        sizes = d.shape
        dims = list(range(lead)) + [lead + i for i, s in enumerate(shape)
                                    if s == 1 and sizes[lead + i] != 1]
        return d.sum(dims, keepdim=True).view(shape)

    def save(out, input, shape):
        return (input.shape,)

    def backward(g, shape):
        return g.expand(shape)


def sum_to_size(self, *size):
    """Sums broadcast dims away so that the result has shape `size`."""
    shape = _shape_args(size)
    have = tuple(self.shape)
    if have == shape:
        return self
    lead = len(have) - len(shape)
    if lead < 0 or any(s != 1 and s != h for s, h in zip(shape, have[lead:])):
        raise RuntimeError(f"size {list(shape)} is not expandable to size {list(have)}")
    return _sum_to_size(self, shape)


register("sum_to_size", method=sum_to_size,
         samples=[S(T(3, 4), 4), S(T(3, 4), (3, 1)), S(T(2, 3, 4), 1, 4)])


# ---- joining and splitting ----------------------------------------------------
def _check_tensor_list(tensors):
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{type(t).__name__}")


@op(aliases=("concat", "concatenate"), method=False)
class cat:
    """Joins tensors along an existing dim."""

    def forward(tensors, dim=0):
        tensors = list(tensors)
        if not tensors:
            raise RuntimeError("torch.cat(): expected a non-empty list of Tensors")
        _check_tensor_list(tensors)
        first = tensors[0]._data
        from .._device import namespace
        return namespace(first.device).cat([t._data for t in tensors], dim)

    def inputs(tensors, dim=0):
        return tuple(tensors)

    def save(out, tensors, dim=0):
        d = _wrap_dim(dim, tensors[0].ndim)
        return (d, [t.shape[d] if t.ndim else 0 for t in tensors])

    def backward(g, dim, sizes):
        out, start = [], 0
        for s in sizes:
            out.append(g.narrow(dim, start, s))
            start += s
        return tuple(out)

    samples = [S([T(2, 3), T(1, 3)]), S([T(2, 3), T(2, 2), T(2, 1)], 1),
               S([T(2, 3), T(2, 3, grad=False)], -1)]


def stack(tensors, dim=0):
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    _check_tensor_list(tensors)
    shape0 = tuple(tensors[0].shape)
    for i, t in enumerate(tensors):
        if tuple(t.shape) != shape0:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"{list(shape0)} at entry 0 and {list(t.shape)} at entry {i}")
    d = _wrap_dim(dim, len(shape0) + 1)
    return cat([t.unsqueeze(d) for t in tensors], d)


def hstack(tensors):
    tensors = [t if t.ndim else t.reshape(1) for t in tensors]
    return cat(tensors, 0 if tensors[0].ndim == 1 else 1)


def vstack(tensors):
    return cat([t.reshape(1, -1) if t.ndim < 2 else t for t in tensors], 0)


def dstack(tensors):
    def at3(t):
        return t.reshape(1, 1, -1) if t.ndim < 2 else t.unsqueeze(-1) if t.ndim == 2 else t
    return cat([at3(t) for t in tensors], 2)


def split(tensor, split_size_or_sections, dim=0):
    d = _wrap_dim(dim, tensor.ndim)
    n = tensor.shape[d]
    if isinstance(split_size_or_sections, numbers.Integral):
        size = int(split_size_or_sections)
        if size <= 0 and not (size == 0 and n == 0):
            raise RuntimeError(f"split expects split_size be non-negative, but got "
                               f"split_size={size}")
        if n == 0:
            return (tensor,)
        return tuple(narrow(tensor, d, s, min(size, n - s)) for s in range(0, n, size))
    sizes = [int(s) for s in split_size_or_sections]
    if sum(sizes) != n:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} "
                           f"(input tensor's size at dimension {d}), but got "
                           f"split_sizes={sizes}")
    out, start = [], 0
    for s in sizes:
        out.append(narrow(tensor, d, start, s))
        start += s
    return tuple(out)


def chunk(input, chunks, dim=0):
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    n = input.shape[_wrap_dim(dim, input.ndim)]
    size = -(-n // chunks) if n else 0
    if size == 0:
        return (input,) if n == 0 else ()
    return split(input, size, dim)


def unbind(input, dim=0):
    d = _wrap_dim(dim, input.ndim)
    return tuple(select(input, d, i) for i in range(input.shape[d]))


def atleast_1d(*tensors):
    out = tuple(t.reshape(1) if t.ndim == 0 else t for t in _flat(tensors))
    return out[0] if len(out) == 1 else out


def atleast_2d(*tensors):
    out = tuple(t.reshape(1, -1) if t.ndim < 2 else t for t in _flat(tensors))
    return out[0] if len(out) == 1 else out


def _flat(tensors):
    return tensors[0] if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)) \
        else tensors


for _f, _samples in (
        (stack, [S([T(2, 3), T(2, 3)]), S([T(2, 3), T(2, 3)], -1)]),
        (hstack, [S([T(2, 3), T(2, 1)])]), (vstack, [S([T(2, 3), T(3)])]),
        (dstack, [S([T(2, 3), T(2, 3)])]),
        (split, [S(T(5, 2), 2), S(T(5, 2), [1, 4]), S(T(2, 5), 3, 1)]),
        (chunk, [S(T(5, 2), 2), S(T(2, 6), 3, 1)]), (unbind, [S(T(3, 2)), S(T(3, 2), 1)])):
    register(_f.__name__, function=_f, method=None if _f in (stack, hstack, vstack, dstack)
             else _f, samples=_samples)
for _f in (atleast_1d, atleast_2d):
    register(_f.__name__, function=_f)


# ---- in-place views: the tensor itself takes the view's layout and history ----
def _inplace_view(name, view_op):
    def method(self, *args, **kwargs):
        if grad_mode.state.enabled and self._requires_grad:
            check_inplace(self)
        r = view_op(self, *args, **kwargs)
        self._data = r._data
        if r._grad_fn is not None:
            self._grad_fn, self._output_nr = r._grad_fn, r._output_nr
        return self
    method.__name__ = name
    setattr(Tensor, name, dispatch_point(method, name))


for _name, _view_op in (("squeeze_", squeeze), ("unsqueeze_", unsqueeze), ("t_", t),
                        ("transpose_", transpose), ("swapaxes_", transpose),
                        ("swapdims_", transpose), ("as_strided_", as_strided)):
    _inplace_view(_name, _view_op)


def resize_(self, *sizes, memory_format=None):
    """Gives the tensor the shape `sizes` in place, as PyTorch's resize_:
    the same number of elements on a contiguous tensor keeps its storage
    (views of it still share it); otherwise new memory holds the first
    elements in order and the rest are uninitialized."""
    del memory_format
    shape = _shape_args(sizes)
    if any(s < 0 for s in shape):
        raise RuntimeError(f"Trying to create tensor with negative dimension "
                           f"{min(shape)}: {list(shape)}")
    if self._requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    n = 1
    for s in shape:
        n *= s
    raw = self._data
    if n == raw.numel() and raw.is_contiguous():
        self._data = raw.view(*shape)
        return self
    from .._creation import empty
    fresh = empty(shape, dtype=self.dtype, device=self.device)._data
    k = min(n, raw.numel())
    if k:
        fresh.view(-1).narrow(0, 0, k).copy_(raw.reshape(-1).narrow(0, 0, k))
    self._data = fresh
    return self


Tensor.resize_ = dispatch_point(resize_, "resize")
