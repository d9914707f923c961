"""The raw CUDA tensor: a Python object owning one reference to a libTHC
``thc_tensor``, with ember.th's Tensor API (no autograd).

This module holds the class skeleton and what every op family shares:
metadata, Python numbers as operands, host <-> device conversion and
printing.  The op families live in _tensor_ops (element-wise),
_tensor_math (reductions, matrix products) and _tensor_shape (views,
indexing, random) and are attached to the class when ember.thc loads.
"""
import builtins
import numbers
import operator
import threading

import numpy as np

import ember.th as _th
from ember.th import dtypes as _dt

from ._lib import check, ffi, lib
from ._device_guard import on_device
from ._host_memory import is_pinned, keep_until_done, pinned_empty

NULL = ffi.NULL
_DTYPES = [_dt.BY_CODE[i] for i in range(lib.THC_NUM_DTYPES)]
_new = object.__new__


def raise_last():
    """Raises the exception for libTHC's last error on this thread (after a
    call returned NULL)."""
    check(lib.thc_last_status() or lib.THC_ERR_RUNTIME)


class Tensor:
    """A strided tensor in CUDA device memory, backed by libTHC."""

    __slots__ = ("_p", "__weakref__")

    def __del__(self):
        p = getattr(self, "_p", None)
        if p:
            lib.thc_tensor_release(p)

    # ---- metadata ---------------------------------------------------
    @property
    def shape(self):
        p = self._p
        return _th.Size(p.sizes[0:p.ndim])

    def size(self, dim=None):
        p = self._p
        if dim is None:
            return _th.Size(p.sizes[0:p.ndim])
        if p.ndim == 0:   # nothing to read: a 0-d tensor has no dims
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        return p.sizes[wrap_dim(dim, p.ndim)]

    def stride(self, dim=None):
        p = self._p
        if dim is None:
            return tuple(p.strides[0:p.ndim])
        if p.ndim == 0:   # nothing to read: a 0-d tensor has no dims
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        return p.strides[wrap_dim(dim, p.ndim)]

    @property
    def dtype(self):
        return _DTYPES[self._p.dtype]

    @property
    def ndim(self):
        return self._p.ndim

    def dim(self):
        return self._p.ndim

    ndimension = dim

    def numel(self):
        return lib.thc_numel(self._p)

    nelement = numel

    def element_size(self):
        return lib.thc_dtype_itemsize(self._p.dtype)

    @property
    def itemsize(self):
        return lib.thc_dtype_itemsize(self._p.dtype)

    @property
    def nbytes(self):
        return lib.thc_numel(self._p) * lib.thc_dtype_itemsize(self._p.dtype)

    def storage_offset(self):
        return self._p.offset

    def is_contiguous(self, memory_format=None):
        return bool(lib.thc_is_contiguous(self._p))

    def is_floating_point(self):
        return self.dtype.is_floating_point

    @property
    def device(self):
        # a string: the front's device_of() parses it (ember.device('cuda:0'))
        return f"cuda:{self._p.storage.device}"

    @property
    def is_cuda(self):
        return True

    def get_device(self):
        return self._p.storage.device

    def data_ptr(self):
        return int(ffi.cast("uintptr_t", lib.thc_data_ptr(self._p)))

    def untyped_storage_nbytes(self):
        return self._p.storage.nbytes

    def is_shared(self):
        return False  # device memory is never in POSIX shared memory

    def _version(self):
        return self._p.storage.version

    def _sole_owner(self, base=None):
        """True when this tensor (and `base`, a tensor it views, if given)
        is the only holder of its device memory and is contiguous; autograd
        then keeps a fresh gradient as .grad without copying it."""
        p = self._p
        holders = 1
        if base is not None:
            b = base._p
            if b.refcount != 1 or b.storage != p.storage:
                return False
            holders = 2
        # storage flag bit 0: memory wrapped from another library
        return (p.refcount == 1 and p.storage.refcount == holders
                and not p.storage.flags & 1 and bool(lib.thc_is_contiguous(p)))

    def __len__(self):
        p = self._p
        if p.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return p.sizes[0]

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (wrap(lib.thc_select(self._p, 0, i)) for i in range(self.shape[0]))

    __hash__ = object.__hash__


_Tensor = Tensor


def wrap(p):
    """A Tensor owning the new reference p; raises the C error if NULL."""
    if not p:
        raise_last()
    t = _new(_Tensor)
    t._p = p
    return t


def registrar(functions):
    """register(fn, names=None, method=True): puts fn into a family's
    `functions` under its names and, unless method=False, on Tensor."""
    def register(fn, names=None, method=True):
        for n in names or (fn.__name__,):
            functions[n] = fn
            if method:
                setattr(_Tensor, n, fn)
        return fn
    return register


def wrap_dim(dim, ndim):
    n = ndim if ndim > 0 else 1
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-n}, {n - 1}], but got {dim})")
    return dim + n if dim < 0 else dim


def int64_array(values):
    values = list(values)
    try:
        return ffi.new("int64_t[]", values)
    except OverflowError:  # a size, stride or offset past int64: PyTorch's error type
        bad = next(v for v in values if not -2**63 <= v < 2**63)
        raise RuntimeError(f"value {bad} does not fit in int64 (in {values})") from None


def int_array(values):
    return ffi.new("int[]", list(values))


def parse_shape(args):
    """zeros(2, 3), zeros((2, 3)), zeros([2, 3]) and zeros(Size) alike."""
    if len(args) == 1 and not isinstance(args[0], numbers.Integral):
        args = args[0]
        if isinstance(args, (Tensor, _th.Tensor)):
            args = args.tolist()
    if isinstance(args, (str, bytes)):
        raise TypeError(f"size must be a sequence of ints, got {args!r}")
    try:
        if any(isinstance(s, bool) for s in args):
            raise TypeError
        return [operator.index(s) for s in args]
    except TypeError:
        raise TypeError(f"size must be a sequence of ints, got {args!r}") from None


def dtype_code(dtype, default):
    if dtype is None:
        return default
    if not isinstance(dtype, _dt.dtype):
        raise TypeError(f"dtype must be an ember dtype, got {dtype!r}")
    return dtype.code


def default_float():
    """The default floating dtype code.  ember.th's is the reference: the
    front sets it there, so libTHC's follows it here."""
    code = _th.get_default_dtype().code
    if lib.thc_get_default_dtype() != code:
        lib.thc_set_default_dtype(code)
    return code


# ---- operands: Python numbers and CPU scalars as 0-d host tensors -----
# Numbers become 0-d host "wrapped number" tensors (bool, int64 or float64,
# so a float keeps all its digits) that rank below every tensor in type
# promotion, exactly as ember.th does.  Small ones are cached forever.
_scalar_cache = {}
_MAX_CACHED = 4096


def scalar_ptr(v):
    """thc_tensor* for a Python number (borrowed: the cache or this
    thread's keep-alive list holds the reference)."""
    key = (v.__class__, v)
    p = _scalar_cache.get(key)
    if p is not None:
        return p
    if isinstance(v, bool):
        p = lib.thc_scalar_int64(int(v), lib.THC_BOOL)
    elif isinstance(v, numbers.Integral):
        v = int(v)
        if not -(1 << 63) <= v < (1 << 63):
            raise RuntimeError(f"Overflow when unpacking long: {v}")
        p = lib.thc_scalar_int64(v, lib.THC_INT64)
    elif isinstance(v, numbers.Real):
        p = lib.thc_scalar_double(float(v), lib.THC_FLOAT64)
    elif isinstance(v, numbers.Complex):
        raise TypeError("complex numbers are not supported by ember tensors")
    else:
        raise TypeError(f"expected a Tensor or a number, but got {type(v).__name__}")
    if not p:
        raise_last()
    p.flags = lib.THC_TENSOR_WRAPPED_NUMBER
    if len(_scalar_cache) < _MAX_CACHED and v == v:
        cached = _scalar_cache.setdefault(key, p)
        if cached is not p:  # another thread cached this number meanwhile
            lib.thc_tensor_release(p)
            p = cached
    else:
        _keep_alive(wrap(p))
    return p


# Uncached operands live until their thread has made 32 to 64 more: the
# pointer is lent to a C call that runs without the GIL, so only the thread
# that made it may drop it.
_keep = threading.local()


def _keep_alive(t):
    kept = getattr(_keep, "tensors", None)
    if kept is None:
        kept = _keep.tensors = []
    kept.append(t)
    if len(kept) > 64:
        del kept[:32]


def _host_operand(t):
    """A 0-d CPU tensor is a scalar operand (as in PyTorch; it ranks as a
    0-d tensor, not a number); any other CPU tensor is an error."""
    if t.ndim != 0:
        raise RuntimeError("Expected all tensors to be on the same device, but found at "
                           "least two devices, cuda:0 and cpu!")
    d = t.dtype
    v = t.item()
    if d.is_floating_point:
        p = lib.thc_scalar_double(v, d.code)
    else:
        p = lib.thc_scalar_int64(int(v), d.code)
    h = wrap(p)
    p.flags = 0
    _keep_alive(h)
    return p


def operand(x):
    """thc_tensor* for a CUDA Tensor, a Python number or a 0-d CPU tensor."""
    if x.__class__ is _Tensor or isinstance(x, _Tensor):
        return x._p
    if isinstance(x, _th.Tensor):
        return _host_operand(x)
    return scalar_ptr(x)


def scalar_tensor(v, dtype=None):
    """A fresh 0-d device Tensor holding v (in dtype when given)."""
    if isinstance(v, Tensor):
        return v if dtype is None or v.dtype is dtype else wrap(lib.thc_to_dtype(v._p, dtype.code))
    if dtype is None:
        dtype = _dt.bool_ if isinstance(v, bool) else _dt.int64 \
            if isinstance(v, numbers.Integral) else _DTYPES[default_float()]
    t = wrap(lib.thc_empty(0, NULL, dtype.code))
    check(lib.thc_fill(t._p, operand(v)))
    return t


# ---- host <-> device ---------------------------------------------------
def to_host(self, non_blocking=False):
    """A new contiguous ember.th (CPU) tensor with this tensor's values.
    non_blocking: the result lies in pinned memory and is filled
    asynchronously (read it after synchronizing the stream)."""
    shape = tuple(self.shape)
    out = pinned_empty(shape, self.dtype) if non_blocking else None
    if out is None:
        out = _th.empty(shape, dtype=self.dtype)
        if out.numel():
            check(lib.thc_copy_to_host(ffi.cast("void *", out.data_ptr()), self._p))
    elif out.numel():
        check(lib.thc_copy_to_host_async(ffi.cast("void *", out.data_ptr()), self._p))
        keep_until_done(out)
    return out


def _send(dst, host, non_blocking):
    """dst[...] = host, a contiguous ember.th tensor of dst's shape and
    dtype: asynchronous when asked for and `host` is pinned."""
    address = ffi.cast("void *", host.data_ptr())
    if non_blocking and is_pinned(host):
        check(lib.thc_copy_from_host_async(dst._p, address))
        keep_until_done(host)   # its memory is read after this returns
    else:
        check(lib.thc_copy_from_host(dst._p, address))


def upload(host, non_blocking=False):
    """A new contiguous device tensor from an ember.th tensor."""
    shape = tuple(host.shape)
    t = wrap(lib.thc_empty(len(shape), int64_array(shape), host.dtype.code))
    if t.numel():
        _send(t, host.contiguous(), non_blocking)
    return t


def _copy_from_host(self, src, non_blocking=False):
    """self[...] = src for an ember.th tensor or NumPy array: converted and
    broadcast on the host, then one transfer (through a device buffer when
    self is not contiguous)."""
    if isinstance(src, np.ndarray):
        src = _th.tensor(src)
    src = src.to(self.dtype).expand(tuple(self.shape)).contiguous()
    if src.numel():
        _send(self, src, non_blocking)


def copy_(self, src, non_blocking=False):
    """non_blocking: a copy from pinned host memory is queued on the current
    stream and this returns at once."""
    if isinstance(src, Tensor):
        check(lib.thc_copy(self._p, src._p))
    elif isinstance(src, (_th.Tensor, np.ndarray)):
        _copy_from_host(self, src, non_blocking)
    else:
        check(lib.thc_copy(self._p, operand(src)))
    return self


def fill_(self, value):
    if isinstance(value, Tensor) and value.numel() != 1 or \
            isinstance(value, _th.Tensor) and value.ndim != 0:
        raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor "
                           f"with {value.ndim} dimensions.")
    check(lib.thc_fill(self._p, operand(value)))
    return self


def zero_(self):
    check(lib.thc_zero(self._p))
    return self


def clone(self, *, memory_format=None):
    return wrap(lib.thc_clone(self._p))


def contiguous(self, memory_format=None):
    p = lib.thc_contiguous(self._p)
    if p == self._p:
        lib.thc_tensor_release(p)
        return self
    return wrap(p)


def detach(self):
    return wrap(lib.thc_alias(self._p))


def numpy(self, *, force=False):
    """A NumPy array with a copy of the values (device memory cannot be
    shared with NumPy)."""
    if self.dtype.numpy is None:
        raise TypeError(f"Got unsupported ScalarType {self.dtype._title}")
    return to_host(self).numpy()


def _array(self, dtype=None, copy=None):
    a = to_host(self if self.dtype.numpy is not None else self.float()).numpy()
    return a if dtype is None else a.astype(dtype, copy=False)


def _is_cpu(device):
    return device is not None and str(device).split(":")[0] == "cpu"


def _check_cuda(device):
    s = str(device)
    name, _, idx = s.partition(":")
    if name != "cuda":
        raise RuntimeError(f"ember.thc tensors can move to 'cpu' or 'cuda', not {device}")
    here = 0 if not idx else int(idx)
    count = ffi.new("int *")
    check(lib.thc_device_count(count))
    if here >= count[0]:
        raise RuntimeError(f"CUDA device {here} does not exist ({count[0]} device(s))")
    return here


def to(self, *args, dtype=None, device=None, copy=False, non_blocking=False, **kwargs):
    """to(dtype), to('cpu') (an ember.th tensor), to('cuda'), to(other)."""
    for a in args:
        if isinstance(a, _dt.dtype):
            dtype = a
        elif isinstance(a, (Tensor, _th.Tensor)):
            dtype, device = a.dtype, a.device
        elif a is not None:
            device = a
    if _is_cpu(device):
        host = to_host(self, non_blocking)
        return host if dtype is None or dtype is self.dtype else host.to(dtype)
    if device is not None and ":" in str(device) and \
            _check_cuda(device) != self._p.storage.device:
        return _to_other_device(self, _check_cuda(device), dtype)
    if dtype is None or dtype is self.dtype:
        return clone(self) if copy else self
    return wrap(lib.thc_to_dtype(self._p, dtype.code))


def _to_other_device(self, index, dtype):
    """A copy on CUDA device `index`: a peer copy between the devices."""
    with on_device(index):
        out = wrap(lib.thc_empty(self._p.ndim, self._p.sizes, (dtype or self.dtype).code))
        check(lib.thc_copy(out._p, self._p))
    return out


def lib_version():
    return ffi.string(lib.thc_version()).decode()


def cpu(self, memory_format=None):
    return to_host(self)


def cuda(self, device=None, non_blocking=False, memory_format=None):
    return self if device is None else to(self, device if isinstance(device, str)
                                          else f"cuda:{int(device)}", non_blocking=non_blocking)


def item(self):
    p = self._p
    n = lib.thc_numel(p)
    if n != 1:
        raise RuntimeError(f"a Tensor with {n} elements cannot be converted to Scalar")
    if lib.thc_dtype_is_floating(p.dtype):
        v = ffi.new("double *")
        check(lib.thc_get_double(p, 0, v))
        return v[0]
    v = ffi.new("int64_t *")
    check(lib.thc_get_int64(p, 0, v))
    return bool(v[0]) if p.dtype == lib.THC_BOOL else v[0]


def tolist(self):
    return to_host(self).tolist()


def _bool(self):
    n = lib.thc_numel(self._p)
    if n != 1:
        raise RuntimeError(f"Boolean value of Tensor with {'more than one' if n else 'no'} "
                           "value is ambiguous")
    return bool(item(self))


def _index(self):
    if self.dtype.is_floating_point or lib.thc_numel(self._p) != 1:
        raise TypeError("only integer tensors of a single element can be converted to an index")
    return int(item(self))


def _repr(self):
    """ember.th's text for the same values, with the device added after the
    values (as PyTorch: tensor([...], device='cuda:0', dtype=...))."""
    r = repr(to_host(self))
    end = r.rfind("]") + 1 if "]" in r else r.find(",") if "," in r else len(r) - 1
    return f"{r[:end]}, device='{self.device}'{r[end:]}"


def _rebuild(host, device_index):
    count = ffi.new("int *")
    check(lib.thc_device_count(count))
    with on_device(device_index if 0 <= device_index < count[0] else None):
        return upload(host)   # that device is not here: the current one


def _reduce(self):
    # pickles as the CPU tensor's bytes; unpickling uploads to the same
    # device index when it exists, else to the current device
    return (_rebuild, (to_host(self), self._p.storage.device))


def _as_dtype(d):
    def convert(self, memory_format=None):
        return to(self, d)
    return convert


for _name, _d in (("float", _dt.float32), ("double", _dt.float64), ("half", _dt.float16),
                  ("bfloat16", _dt.bfloat16), ("long", _dt.int64), ("int", _dt.int32),
                  ("short", _dt.int16), ("char", _dt.int8), ("byte", _dt.uint8),
                  ("bool", _dt.bool_)):
    setattr(Tensor, _name, _as_dtype(_d))

for _f in (copy_, fill_, zero_, clone, contiguous, detach, numpy, to, cpu, cuda, item,
           tolist):
    setattr(Tensor, _f.__name__, _f)
Tensor.type_as = lambda self, other: to(self, other.dtype)
Tensor.__array__ = _array
Tensor.__bool__ = _bool
Tensor.__float__ = lambda self: builtins.float(item(self))
Tensor.__int__ = lambda self: builtins.int(item(self))
Tensor.__index__ = _index
Tensor.__repr__ = _repr
Tensor.__str__ = _repr
Tensor.__reduce__ = _reduce
Tensor.__format__ = lambda self, spec: format(item(self), spec) if self.ndim == 0 \
    else format(repr(self), spec)
