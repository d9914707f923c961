"""Zero-copy exchange with other CUDA libraries (CuPy, Numba, ...) through
``__cuda_array_interface__`` (version 3): ember.thc tensors expose it, and
``ember.thc.as_tensor`` wraps any object that has it, sharing its memory
and keeping the object alive while a tensor uses it."""
import itertools

import numpy as np

from ._lib import check, ffi, lib
from ._tensor import Tensor, int64_array, wrap
from ember.th import dtypes as _dt

# typestr of each dtype; bfloat16 has none in the array-interface protocol
_TYPESTR = {"float32": "<f4", "float64": "<f8", "float16": "<f2", "int8": "|i1",
            "uint8": "|u1", "int16": "<i2", "int32": "<i4", "int64": "<i8", "bool": "|b1"}
_BY_TYPESTR = {np.dtype(v).str: k for k, v in _TYPESTR.items()}

# what keeps foreign memory that libTHC tensors wrap valid, by key, until
# libTHC releases it: (the owning object, a function to call then)
_held = {}
_keys = itertools.count(1)


@ffi.callback("void(void *, void *)")
def _release(ctx, data):
    owner, on_release = _held.pop(int(ffi.cast("uintptr_t", ctx)), (None, None))
    if on_release is not None:
        on_release()


def wrap_foreign(address, shape, strides, itemsize, dtype, device, owner=None,
                 on_release=None):
    """A tensor over device memory of another library: `shape` and element
    `strides` (any signs; None: contiguous) from `address`; `owner` is kept
    alive and `on_release()` called when the last tensor over the memory
    goes."""
    if strides is None:
        strides, step = [], 1
        for n in reversed(shape):
            strides.insert(0, step)
            step *= max(n, 1)
    # the element range the view reaches, so the storage covers it all
    lo = sum((n - 1) * e for n, e in zip(shape, strides) if e < 0 and n > 0)
    hi = sum((n - 1) * e for n, e in zip(shape, strides) if e > 0 and n > 0)
    nbytes = 0 if 0 in shape else (hi - lo + 1) * itemsize
    key = next(_keys)
    _held[key] = (owner, on_release)
    storage = lib.thc_storage_wrap(ffi.cast("void *", address + lo * itemsize), nbytes, device,
                                   _release, ffi.cast("void *", key))
    if not storage:
        _held.pop(key, None)
        wrap(ffi.NULL)   # raises libTHC's error
    p = lib.thc_tensor_from_storage(storage, -lo, len(shape), int64_array(shape),
                                    int64_array(strides), dtype.code)
    lib.thc_storage_release(storage)   # the tensor holds it now
    return wrap(p)


def cuda_array_interface(t):
    """The interface dict of a device tensor (shape, typestr, data, strides
    in bytes, version 3; stream 1: libTHC queues on the legacy default
    stream unless a stream is current)."""
    name = t.dtype.name
    if name not in _TYPESTR:
        raise TypeError(f"__cuda_array_interface__ has no type for {name} tensors; convert "
                        "first (e.g. t.float())")
    item = t.element_size()
    stream = int(ffi.cast("uintptr_t", lib.thc_current_stream()))
    return {"shape": tuple(t.shape), "typestr": _TYPESTR[name],
            "data": (t.data_ptr(), False), "version": 3,
            "strides": None if t.is_contiguous() else tuple(s * item for s in t.stride()),
            "stream": stream or 1}


def from_cuda_array(obj):
    """A tensor sharing the device memory of `obj`, which has
    ``__cuda_array_interface__``."""
    cai = obj.__cuda_array_interface__
    shape = tuple(int(s) for s in cai["shape"])
    typestr = np.dtype(cai["typestr"]).str
    if typestr not in _BY_TYPESTR:
        raise TypeError(f"ember.thc cannot hold arrays of type {cai['typestr']}")
    dtype = getattr(_dt, _BY_TYPESTR[typestr])
    item = np.dtype(typestr).itemsize
    strides = cai.get("strides")
    if strides is not None and any(s % item for s in strides):
        raise ValueError(f"strides {tuple(strides)} are not multiples of the item size {item}")
    device = ffi.new("int *")
    check(lib.thc_get_device(device))
    elems = None if strides is None else [s // item for s in strides]
    return wrap_foreign(int(cai["data"][0]), shape, elems, item, dtype, device[0], owner=obj)


Tensor.__cuda_array_interface__ = property(cuda_array_interface)


def record_stream(self, stream):
    """Marks this tensor's memory as used by work on `stream` too: the
    allocator reuses it only after that work, once the tensor is freed."""
    check(lib.thc_tensor_record_stream(self._p, stream._handle))


Tensor.record_stream = record_stream
