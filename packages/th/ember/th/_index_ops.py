"""Indexing and shaping ops: index_select, gather, scatter family,
index_add/copy/fill, masked_*, nonzero, take/put, cat/stack/split/chunk,
flip/roll/repeat/tile, tril/triu."""
import builtins
import numbers

from ._binding_views import stack_with
from ._core import Tensor, _wrap_dim, int64_array, int_array, operand, wrap
from ._lib import NULL, check, ffi, lib

_functions = {}


def _register(fn, names=None, method=True, function=True):
    for n in names or (fn.__name__,):
        if function:
            _functions[n] = fn
        if method:
            setattr(Tensor, n, fn)
    return fn


def index_select(input, dim, index, *, out=None):
    r = wrap(lib.th_index_select(input._p, dim, index._p))
    return r if out is None else out.copy_(r)


def gather(input, dim, index, *, sparse_grad=False, out=None):
    r = wrap(lib.th_gather(input._p, dim, index._p))
    return r if out is None else out.copy_(r)


_SCATTER_REDUCE = {"sum": lib.TH_SCATTER_SUM, "prod": lib.TH_SCATTER_PROD,
                   "mean": lib.TH_SCATTER_MEAN, "amax": lib.TH_SCATTER_AMAX,
                   "amin": lib.TH_SCATTER_AMIN}
_SCATTER_LEGACY = {None: lib.TH_SCATTER_NONE, "add": lib.TH_SCATTER_SUM,
                   "multiply": lib.TH_SCATTER_PROD}


def _src(src, self, index):
    """A source tensor for scatter: a number becomes a 0-d tensor expanded
    to the index's shape."""
    if isinstance(src, Tensor):
        return src
    # a fill, not a cast: 1j for a real tensor is refused, as PyTorch does
    v = wrap(lib.th_empty(0, NULL, self.dtype.code))
    check(lib.th_fill(v._p, operand(src)))
    return v.expand(index.shape)


def scatter_(self, dim, index, src=None, *, value=None, reduce=None):
    if src is None:
        src = value
    try:
        code = _SCATTER_LEGACY[reduce]
    except KeyError:
        raise RuntimeError(f"reduce argument must be either add or multiply, got {reduce}") from None
    s = _src(src, self, index)
    check(lib.th_scatter_(self._p, dim, index._p, s._p, code, 1))
    return self


def scatter(input, dim, index, src=None, *, value=None, reduce=None):
    return scatter_(input.clone(), dim, index, src, value=value, reduce=reduce)


def scatter_add_(self, dim, index, src):
    s = _src(src, self, index)
    n = self.dim()
    if self.dtype.is_complex and s.dtype == self.dtype and n and index.dim() == n \
            and -n <= dim < n:
        # complex sums are the sums of the parts: the (re, im) pairs
        # scattered with the index repeated along the pairs' dim
        from ._complex import view_as_real
        pairs = index.unsqueeze(-1).expand(*index.shape, 2)
        out, parts = view_as_real(self), view_as_real(s)  # alive through the call
        check(lib.th_scatter_(out._p, dim % n, pairs._p, parts._p, lib.TH_SCATTER_SUM, 1))
        return self
    check(lib.th_scatter_(self._p, dim, index._p, s._p, lib.TH_SCATTER_SUM, 1))
    return self


def scatter_add(input, dim, index, src):
    return scatter_add_(input.clone(), dim, index, src)


def scatter_reduce_(self, dim, index, src, reduce, *, include_self=True):
    try:
        code = _SCATTER_REDUCE[reduce]
    except KeyError:
        raise RuntimeError("reduce argument must be either sum, prod, mean, amax or amin, "
                           f"got {reduce}") from None
    s = _src(src, self, index)
    check(lib.th_scatter_(self._p, dim, index._p, s._p, code, bool(include_self)))
    return self


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    return scatter_reduce_(input.clone(), dim, index, src, reduce, include_self=include_self)


def index_add_(self, dim, index, source, *, alpha=1):
    check(lib.th_index_add_(self._p, dim, index._p, source._p, operand(alpha)))
    return self


def index_add(input, dim, index, source, *, alpha=1):
    return index_add_(input.clone(), dim, index, source, alpha=alpha)


def index_copy_(self, dim, index, source):
    check(lib.th_index_copy_(self._p, dim, index._p, source._p))
    return self


def index_copy(input, dim, index, source):
    return index_copy_(input.clone(), dim, index, source)


def index_fill_(self, dim, index, value):
    check(lib.th_index_fill_(self._p, dim, index._p, operand(value)))
    return self


def index_fill(input, dim, index, value):
    return index_fill_(input.clone(), dim, index, value)


def masked_fill_(self, mask, value):
    check(lib.th_masked_fill_(self._p, mask._p, operand(value)))
    return self


def masked_fill(input, mask, value):
    from ._views import broadcast_shapes
    shape = broadcast_shapes(input.shape, mask.shape)
    out = input.expand(shape).clone() if tuple(shape) != tuple(input.shape) else input.clone()
    return masked_fill_(out, mask, value)


def masked_select(input, mask, *, out=None):
    r = wrap(lib.th_masked_select(input._p, mask._p))
    return r if out is None else out.copy_(r)


def masked_scatter_(self, mask, source):
    check(lib.th_masked_scatter_(self._p, mask._p, source._p))
    return self


def masked_scatter(input, mask, source):
    return masked_scatter_(input.clone(), mask, source)


def nonzero(input, *, as_tuple=False):
    r = wrap(lib.th_nonzero(input._p))
    if not as_tuple:
        return r
    if input.ndim == 0:  # one index 0 when the value is nonzero, none otherwise
        from ._convert import zeros
        return (zeros(r.shape[0], dtype=r.dtype),)
    return tuple(r.select(1, k) for k in range(input.ndim))


def argwhere(input):
    return nonzero(input)


def take(input, index):
    return wrap(lib.th_take(input._p, index._p))


def put_(self, index, source, accumulate=False):
    check(lib.th_put_(self._p, index._p, source._p, bool(accumulate)))
    return self


def put(input, index, source, accumulate=False):
    return put_(input.clone(), index, source, accumulate)


def index_put_(self, indices, values, accumulate=False):
    arr = ffi.new("th_tensor *[]", [i._p for i in indices])
    check(lib.th_index_put_(self._p, 0, len(indices), arr, operand(values), bool(accumulate)))
    return self


def index_put(input, indices, values, accumulate=False):
    return index_put_(input.clone(), indices, values, accumulate)


for _f in (index_select, gather, scatter, scatter_, scatter_add, scatter_add_, scatter_reduce,
           scatter_reduce_, index_add, index_add_, index_copy, index_copy_, index_fill,
           index_fill_, masked_fill, masked_fill_, masked_select, masked_scatter,
           masked_scatter_, nonzero, argwhere, take, put_, put, index_put_, index_put):
    _register(_f)


# ---- joining and splitting ------------------------------------------
def cat(tensors, dim=0, *, out=None):
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("torch.cat(): expected a non-empty list of Tensors")
    arr = ffi.new("th_tensor *[]", [t._p for t in tensors])
    r = wrap(lib.th_cat(len(tensors), arr, dim))
    return r if out is None else out.copy_(r)


def stack(tensors, dim=0, *, out=None):
    return stack_with(cat, list(tensors), dim, out)


def hstack(tensors, *, out=None):
    tensors = [t if t.ndim else t.reshape(1) for t in tensors]
    return cat(tensors, 0 if tensors[0].ndim == 1 else 1, out=out)


def vstack(tensors, *, out=None):
    return cat([t.reshape(1, -1) if t.ndim < 2 else t for t in tensors], 0, out=out)


def split(tensor, split_size_or_sections, dim=0):
    d = _wrap_dim(dim, tensor.ndim)
    n = tensor.shape[d]
    if isinstance(split_size_or_sections, numbers.Integral):
        size = int(split_size_or_sections)
        if size <= 0 and not (size == 0 and n == 0):
            raise RuntimeError(f"split expects split_size be non-negative, but got split_size={size}")
        if n == 0:
            return (tensor,)
        return tuple(tensor.narrow(d, s, builtins.min(size, n - s)) for s in range(0, n, size))
    sizes = [int(s) for s in split_size_or_sections]
    if sum(sizes) != n:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} (input "
                           f"tensor's size at dimension {d}), but got split_sizes={sizes}")
    out, start = [], 0
    for s in sizes:
        out.append(tensor.narrow(d, start, s))
        start += s
    return tuple(out)


def chunk(input, chunks, dim=0):
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0, got: %d" % chunks)
    d = _wrap_dim(dim, input.ndim)
    n = input.shape[d]
    size = -(-n // chunks) if n else 0
    if size == 0:
        return tuple([input] if n == 0 else [])
    return split(input, size, d)


def unbind(input, dim=0):
    d = _wrap_dim(dim, input.ndim)
    return tuple(input.select(d, i) for i in range(input.shape[d]))


def flip(input, dims):
    dims = [dims] if isinstance(dims, numbers.Integral) else list(dims)
    return wrap(lib.th_flip(input._p, len(dims), int_array(dims)))


def fliplr(input):
    if input.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, [1])


def flipud(input):
    if input.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, [0])


def roll(input, shifts, dims=None):
    shifts = [shifts] if isinstance(shifts, numbers.Integral) else list(shifts)
    if dims is None:
        if len(shifts) != 1:
            raise RuntimeError("`shifts` required to be a scalar when `dims` is not specified")
        return wrap(lib.th_roll(input._p, 1, int64_array(shifts), NULL))
    dims = [dims] if isinstance(dims, numbers.Integral) else list(dims)
    if len(dims) != len(shifts):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, "
                           f"dims:{len(dims)}")
    return wrap(lib.th_roll(input._p, len(shifts), int64_array(shifts), int_array(dims)))


def repeat(self, *sizes):
    from ._core import parse_shape
    reps = parse_shape(sizes)
    return wrap(lib.th_repeat(self._p, len(reps), int64_array(reps)))


def tile(input, dims):
    dims = list(dims)
    if len(dims) < input.ndim:
        dims = [1] * (input.ndim - len(dims)) + dims
    return repeat(input, dims)


def tril(input, diagonal=0, *, out=None):
    r = wrap(lib.th_tril(input._p, int(diagonal)))
    return r if out is None else out.copy_(r)


def triu(input, diagonal=0, *, out=None):
    r = wrap(lib.th_triu(input._p, int(diagonal)))
    return r if out is None else out.copy_(r)


for _f in (cat, stack, hstack, vstack, split, chunk, unbind, flip, fliplr, flipud, roll,
           tile, tril, triu):
    _register(_f)
_register(cat, ["concat", "concatenate"], method=False)
_register(repeat, function=False)
Tensor.tril_ = lambda self, diagonal=0: self.copy_(tril(self, diagonal))
Tensor.triu_ = lambda self, diagonal=0: self.copy_(triu(self, diagonal))

functions = _functions
