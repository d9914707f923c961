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

import numpy as np

import ember.th as _th
from ember.th import dtypes as _dt
from ember.th._binding import (CLibrary, c_arrays, define_metadata, dtype_code, registrar,
                               scalar_operands, shape_parser, tensor_wrapper, wrap_dim)

from ._lib import check, ffi, lib
from ._device_guard import on_device
from ._host_memory import is_pinned, keep_until_done, pinned_empty

NULL = ffi.NULL
_DTYPES = [_dt.BY_CODE[i] for i in range(lib.THC_NUM_DTYPES)]
C = CLibrary(ffi, lib, "thc")


def raise_last():
    """Raises the exception for libTHC's last error on this thread (after a
    call returned NULL)."""
    check(lib.thc_last_status() or lib.THC_ERR_RUNTIME)


class Tensor:
    """A strided tensor in CUDA device memory, backed by libTHC; its metadata
    methods are ember.th._binding's."""

    __slots__ = ("_p", "__weakref__")

    @property
    def device(self):
        # a string: the front's device_of() parses it (ember.device('cuda:0'))
        return f"cuda:{self._p.storage.device}"

    @property
    def is_cuda(self):
        return True

    def get_device(self):
        return self._p.storage.device

    def is_shared(self):
        return False  # device memory is never in POSIX shared memory

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (wrap(lib.thc_select(self._p, 0, i)) for i in range(self.shape[0]))

    __hash__ = object.__hash__


# storage flag bit 0: memory wrapped from another library
define_metadata(Tensor, C, _th.Size, _DTYPES, lambda storage: not storage.flags & 1)
_Tensor = Tensor
wrap = tensor_wrapper(Tensor, raise_last)
int64_array, int_array = c_arrays(ffi)
parse_shape = shape_parser((Tensor, _th.Tensor))


def default_float():
    """The default floating dtype code (libTH's, which libTHC shares)."""
    return lib.thc_get_default_dtype()


# ---- operands: Python numbers and CPU scalars as 0-d host tensors -----
# Numbers are host "wrapped number" tensors, exactly as in ember.th.
scalar_ptr, _keep_alive = scalar_operands(C, wrap, raise_last)


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
