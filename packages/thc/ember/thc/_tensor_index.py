"""The indexing ops on CUDA tensors: index_select, gather, scatter and
scatter_add/scatter_reduce, index_add/copy/fill, masked_fill/select/
scatter, nonzero, take, put_, cumsum/cumprod: libTHC's kernels with
libTH's semantics, and compositions of them."""
import numbers

import numpy as np

import ember.th as _th
from ember.th import dtypes as _dt

from ._lib import check, ffi, lib
from ._tensor import Tensor, registrar, upload, wrap

functions = {}


_register = registrar(Tensor, functions)


def _device_index(index, what):
    """An index argument as a CUDA tensor: CPU tensors, arrays and lists are
    uploaded (indices are small), numbers give a 0-d int64."""
    if isinstance(index, Tensor):
        return index
    if isinstance(index, _th.Tensor):
        return upload(index)
    if isinstance(index, (list, tuple, np.ndarray)) or isinstance(index, numbers.Integral):
        return upload(_th.tensor(index))
    raise TypeError(f"{what}(): index must be a Tensor, got {type(index).__name__}")


def _typed_scalar(value, dtype):
    """A 0-d host scalar of `dtype` for a number (the kernels' value
    operands must have self's dtype); kept alive by the returned Tensor."""
    if isinstance(value, (Tensor, _th.Tensor)):
        value = value.item()
    if dtype.is_floating_point:
        return wrap(lib.thc_scalar_double(float(value), dtype.code))
    return wrap(lib.thc_scalar_int64(int(value), dtype.code))


def _out(r, out):
    return r if out is None else out.copy_(r)


def index_select(input, dim, index, *, out=None):
    idx = _device_index(index, "index_select")
    return _out(wrap(lib.thc_index_select(input._p, dim, idx._p)), out)


def gather(input, dim, index, *, sparse_grad=False, out=None):
    idx = _device_index(index, "gather")
    return _out(wrap(lib.thc_gather(input._p, dim, idx._p)), out)


_HALF = (_dt.float16, _dt.bfloat16)


def _in_float32(self, source, kernel):
    """Runs kernel(target, source) in place; float16/bfloat16 tensors (no
    libTHC kernels for these yet) go through float32 copies."""
    if self.dtype not in _HALF:
        kernel(self, source)
        return self
    work = self.float()
    kernel(work, source.float() if isinstance(source, Tensor) else source)
    return self.copy_(work)


def _scatter(self, dim, index, src, code, what, include_self=True):
    idx = _device_index(index, what)

    def kernel(target, source):
        s = source if isinstance(source, Tensor) else _typed_scalar(source, target.dtype)
        check(lib.thc_scatter_(target._p, dim, idx._p, s._p, code, bool(include_self)))
    if isinstance(src, Tensor) and src.dtype is not self.dtype:
        raise TypeError("scatter(): Expected self.dtype to be equal to src.dtype")
    return _in_float32(self, src, kernel)


_SCATTER_LEGACY = {None: lib.THC_SCATTER_NONE, "add": lib.THC_SCATTER_SUM,
                   "multiply": lib.THC_SCATTER_PROD}
_SCATTER_REDUCE = {"prod": lib.THC_SCATTER_PROD, "amax": lib.THC_SCATTER_AMAX,
                   "amin": lib.THC_SCATTER_AMIN}


def scatter_(self, dim, index, src=None, *, value=None, reduce=None):
    if reduce not in _SCATTER_LEGACY:
        raise RuntimeError(f"reduce argument must be either add or multiply, got {reduce}")
    return _scatter(self, dim, index, value if src is None else src, _SCATTER_LEGACY[reduce],
                    "scatter")


def scatter(input, dim, index, src=None, *, value=None, reduce=None):
    return scatter_(input.clone(), dim, index, src, value=value, reduce=reduce)


def scatter_add_(self, dim, index, src):
    return _scatter(self, dim, index, src, lib.THC_SCATTER_SUM, "scatter_add")


def scatter_add(input, dim, index, src):
    return scatter_add_(input.clone(), dim, index, src)


def scatter_reduce_(self, dim, index, src, reduce, *, include_self=True):
    """'prod', 'amax', 'amin': libTHC's atomic scatter kernels; 'sum' and
    'mean' (with or without self's values) composed from scatter and
    scatter_add."""
    if reduce not in ("sum", "prod", "mean", "amax", "amin"):
        raise RuntimeError("reduce argument must be either sum, prod, mean, amax or amin, "
                           f"got {reduce}")
    if reduce == "mean" and self.dtype is _dt.bool_:
        raise TypeError('"scatter_gather_tensor_cuda_reduce_mean" not implemented for \'Bool\'')
    if reduce in _SCATTER_REDUCE:
        return _scatter(self, dim, index, src, _SCATTER_REDUCE[reduce], "scatter_reduce",
                        include_self)
    idx = _device_index(index, "scatter_reduce")
    if reduce == "sum":
        if not include_self:
            _scatter(self, dim, idx, 0, lib.THC_SCATTER_NONE, "scatter_reduce")
        return scatter_add_(self, dim, idx, src)
    # mean: (self? + sum) / (1? + count) where something was scattered
    count = scatter_add_(_zeros_like(self), dim, idx, _ones_like(idx, self.dtype))
    total = self.clone() if include_self else _scatter(self.clone(), dim, idx, 0,
                                                       lib.THC_SCATTER_NONE, "scatter_reduce")
    scatter_add_(total, dim, idx, src)
    n = count + 1 if include_self else count.clamp(min=1)
    mean = total.div(n, rounding_mode=None if self.dtype.is_floating_point else "floor")
    return self.copy_(mean)


def _zeros_like(t):
    return wrap(lib.thc_empty(t.ndim, t._p.sizes, t._p.dtype)).zero_()


def _ones_like(t, dtype):
    return wrap(lib.thc_empty(t.ndim, t._p.sizes, dtype.code)).fill_(1)


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    return scatter_reduce_(input.clone(), dim, index, src, reduce, include_self=include_self)


def _same_dtype(self, source, what):
    if isinstance(source, Tensor) and source.dtype is not self.dtype:
        raise RuntimeError(f"{what}(): self ({self.dtype._title}) and source "
                           f"({source.dtype._title}) must have the same scalar type")


def index_add_(self, dim, index, source, *, alpha=1):
    idx = _device_index(index, "index_add_")
    a = _typed_scalar(alpha, _dt.float64 if isinstance(alpha, float) else _dt.int64)
    _same_dtype(self, source, "index_add_")
    return _in_float32(self, source, lambda target, src: check(
        lib.thc_index_add_(target._p, dim, idx._p, src._p, a._p)))


def index_add(input, dim, index, source, *, alpha=1):
    return index_add_(input.clone(), dim, index, source, alpha=alpha)


def index_copy_(self, dim, index, source):
    idx = _device_index(index, "index_copy_")
    _same_dtype(self, source, "index_copy_")
    return _in_float32(self, source, lambda target, src: check(
        lib.thc_index_copy_(target._p, dim, idx._p, src._p)))


def index_copy(input, dim, index, source):
    return index_copy_(input.clone(), dim, index, source)


def index_fill_(self, dim, index, value):
    idx = _device_index(index, "index_fill_")
    if isinstance(value, _th.Tensor):
        value = upload(value)

    def kernel(target, v):
        v = v if isinstance(v, Tensor) else _typed_scalar(v, target.dtype)
        check(lib.thc_index_fill_(target._p, dim, idx._p, v._p))
    return _in_float32(self, value, kernel)


def index_fill(input, dim, index, value):
    return index_fill_(input.clone(), dim, index, value)


def _mask(mask, what):
    if isinstance(mask, _th.Tensor):
        raise RuntimeError(f"{what}: expected all tensors to be on the same device, but found "
                           "at least two devices, cuda:0 and cpu!")
    if not isinstance(mask, Tensor):
        raise TypeError(f"{what}: mask must be a Tensor, got {type(mask).__name__}")
    return mask


def _fill_value(value, like):
    if isinstance(value, Tensor):
        return value  # the kernel reads a one-element device tensor
    if isinstance(value, _th.Tensor) and value.ndim != 0:
        raise RuntimeError("masked_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {value.ndim} dimension(s).")
    return _typed_scalar(value, like.dtype)


def masked_fill_(self, mask, value):
    m = _mask(mask, "masked_fill_")
    v = _fill_value(value, self)  # a name keeps it alive across the C call
    check(lib.thc_masked_fill_(self._p, m._p, v._p))
    return self


def masked_fill(input, mask, value):
    m = _mask(mask, "masked_fill")
    shape = _th.broadcast_shapes(tuple(input.shape), tuple(m.shape))
    out = input.expand(shape).clone()
    return masked_fill_(out, m, value)


def masked_select(input, mask, *, out=None):
    m = _mask(mask, "masked_select")
    return _out(wrap(lib.thc_masked_select(input._p, m._p)), out)


def nonzero(input, *, as_tuple=False):
    r = wrap(lib.thc_nonzero(input._p))
    if not as_tuple:
        return r
    if input.ndim == 0:  # one index 0 when the value is nonzero, none otherwise
        z = wrap(lib.thc_empty(1, ffi.new("int64_t[]", [r.shape[0]]), lib.THC_INT64))
        return (z.zero_(),)
    return tuple(r.select(1, k) for k in range(input.ndim))


def argwhere(input):
    return nonzero(input)


def take(input, index):
    """input.flatten()[index], in index's shape."""
    idx = _device_index(index, "take")
    flat = input.reshape(-1)
    return index_select(flat, 0, idx.reshape(-1)).view(idx.shape)


def _flat_positions(self, mask):
    """Flat (row-major) positions of the True entries of mask broadcast
    to self's shape."""
    m = _mask(mask, "masked_scatter_")
    if m.dtype is not _dt.bool_:
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with "
                           f"dtype {m.dtype._title}")
    return nonzero(m.expand(self.shape).reshape(-1)).reshape(-1)


def _write_flat(self, fn):
    """fn(flat view) on self's elements in row-major order: directly when
    self is contiguous, else on a copy written back."""
    work = self.contiguous()
    fn(work.view(-1))
    if work is not self:
        self.copy_(work)
    return self


def masked_scatter_(self, mask, source):
    pos = _flat_positions(self, mask)
    n = pos.shape[0]
    if source.numel() < n:
        raise RuntimeError("masked_scatter: expected source to have at least as many elements "
                           f"as ones in mask ({source.numel()} < {n})")
    src = source.reshape(-1).narrow(0, 0, n)
    return _write_flat(self, lambda flat: index_copy_(flat, 0, pos, src))


def masked_scatter(input, mask, source):
    return masked_scatter_(input.clone(), mask, source)


def put_(self, index, source, accumulate=False):
    """self.flatten()[index] = source (or += with accumulate)."""
    idx = _device_index(index, "put_").reshape(-1)
    src = source.reshape(-1)
    if accumulate:
        return _write_flat(self, lambda flat: index_add_(flat, 0, idx, src))
    return _write_flat(self, lambda flat: index_copy_(flat, 0, idx, src))


def put(input, index, source, accumulate=False):
    return put_(input.clone(), index, source, accumulate)


def _cumulative(fn, name):
    def op(input, dim, *, dtype=None, out=None):
        code = -1 if dtype is None else dtype.code
        return _out(wrap(fn(input._p, dim, code)), out)

    def inplace(self, dim, *, dtype=None):
        return self.copy_(op(self, dim, dtype=dtype))
    op.__name__, inplace.__name__ = name, name + "_"
    return op, inplace


cumsum, cumsum_ = _cumulative(lib.thc_cumsum, "cumsum")
cumprod, cumprod_ = _cumulative(lib.thc_cumprod, "cumprod")

for _f in (index_select, gather, scatter, scatter_, scatter_add, scatter_add_, scatter_reduce,
           scatter_reduce_, index_add, index_add_, index_copy, index_copy_, index_fill,
           index_fill_, masked_fill, masked_fill_, masked_select, masked_scatter,
           masked_scatter_, nonzero, argwhere, take, put_, put, cumsum, cumprod):
    _register(_f)
Tensor.cumsum_ = cumsum_
Tensor.cumprod_ = cumprod_
