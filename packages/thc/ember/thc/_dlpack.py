"""DLPack exchange (the ``__dlpack__`` protocol) for CUDA tensors: export a
tensor as a "dltensor" capsule that PyTorch, CuPy, JAX, ... take without a
copy, and wrap a capsule from them (``from_dlpack``).  The structures are
DLPack's (unversioned DLManagedTensor, the form every consumer accepts),
declared here with ctypes."""
import ctypes

from ._lib import check, ffi, lib
from ._interop import wrap_foreign
from ._tensor import Tensor
from ember.th import dtypes as _dt

K_DL_CPU, K_DL_CUDA = 1, 2
# dtype name -> (DLPack type code, bits)
_CODES = {"float32": (2, 32), "float64": (2, 64), "float16": (2, 16), "bfloat16": (4, 16),
          "int8": (0, 8), "int16": (0, 16), "int32": (0, 32), "int64": (0, 64),
          "uint8": (1, 8), "bool": (6, 8)}
_NAMES = {v: k for k, v in _CODES.items()}


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    pass


_Deleter = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor))
DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                            ("deleter", _Deleter)]

_api = ctypes.pythonapi
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_IsValid.restype = ctypes.c_int
_api.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_SetName.restype = ctypes.c_int
_api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]

# exported: address of the DLManagedTensor -> what keeps it valid (the
# tensor and the ctypes buffers), until its consumer calls the deleter
_exported = {}


@_Deleter
def _delete(managed):
    _exported.pop(ctypes.addressof(managed.contents), None)


# the same two functions on a raw pointer: the destructor must not make a
# Python reference to the capsule being destroyed
_is_valid_raw = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_IsValid", _api))
_get_pointer_raw = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", _api))


@ctypes.CFUNCTYPE(None, ctypes.c_void_p)
def _capsule_destructor(capsule_ptr):
    # a capsule nobody consumed (still named "dltensor") frees its tensor
    if _is_valid_raw(capsule_ptr, b"dltensor"):
        _exported.pop(_get_pointer_raw(capsule_ptr, b"dltensor"), None)


def _sync_for(stream):
    """Makes the consumer's stream safe to read our data: wait for the work
    queued so far on our current stream (a coarse but safe form)."""
    if stream is not None and stream != -1:
        check(lib.thc_stream_synchronize(lib.thc_current_stream()))


def to_dlpack(t, stream=None):
    """A "dltensor" capsule sharing t's memory."""
    name = t.dtype.name
    code, bits = _CODES[name]
    _sync_for(stream)
    n = t.ndim
    shape = (ctypes.c_int64 * max(n, 1))(*t.shape)
    strides = (ctypes.c_int64 * max(n, 1))(*t.stride())
    managed = DLManagedTensor()
    managed.dl_tensor.data = t.data_ptr() or None
    managed.dl_tensor.device = DLDevice(K_DL_CUDA, t.get_device())
    managed.dl_tensor.ndim = n
    managed.dl_tensor.dtype = DLDataType(code, bits, 1)
    managed.dl_tensor.shape = ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64))
    managed.dl_tensor.strides = ctypes.cast(strides, ctypes.POINTER(ctypes.c_int64))
    managed.dl_tensor.byte_offset = 0
    managed.deleter = _delete
    addr = ctypes.addressof(managed)
    _exported[addr] = (t, managed, shape, strides)
    return _api.PyCapsule_New(addr, b"dltensor", ctypes.cast(_capsule_destructor, ctypes.c_void_p))


def from_dlpack(obj):
    """A tensor sharing the CUDA memory of `obj` (anything with
    ``__dlpack__``, or a "dltensor" capsule)."""
    if hasattr(obj, "__dlpack__"):
        stream = int(ffi.cast("uintptr_t", lib.thc_current_stream())) or 1
        try:
            capsule = obj.__dlpack__(stream=stream)
        except TypeError:   # producers of older protocol versions take no stream
            capsule = obj.__dlpack__()
    else:
        capsule = obj
    if not _api.PyCapsule_IsValid(capsule, b"dltensor"):
        raise ValueError("from_dlpack expects an object with __dlpack__ or an unused 'dltensor' "
                         "capsule")
    addr = _api.PyCapsule_GetPointer(capsule, b"dltensor")
    managed = ctypes.cast(addr, ctypes.POINTER(DLManagedTensor))
    dl = managed.contents.dl_tensor
    if dl.device.device_type != K_DL_CUDA:
        raise RuntimeError(f"from_dlpack: the data is on DLPack device type "
                           f"{dl.device.device_type}, not CUDA ({K_DL_CUDA}); use "
                           "ember.from_dlpack for CPU data")
    key = (dl.dtype.code, dl.dtype.bits)
    if key not in _NAMES or dl.dtype.lanes != 1:
        raise TypeError(f"from_dlpack: DLPack type (code {dl.dtype.code}, {dl.dtype.bits} bits, "
                        f"{dl.dtype.lanes} lanes) has no ember dtype")
    dtype = getattr(_dt, _NAMES[key])
    shape = [dl.shape[i] for i in range(dl.ndim)]
    strides = [dl.strides[i] for i in range(dl.ndim)] if dl.strides else None
    _api.PyCapsule_SetName(capsule, b"used_dltensor")   # ours now: its deleter is ours to call

    def delete():
        if managed.contents.deleter:
            managed.contents.deleter(managed)
    return wrap_foreign((dl.data or 0) + dl.byte_offset, shape, strides, dl.dtype.bits // 8,
                        dtype, dl.device.device_id, on_release=delete)


def _dlpack(self, stream=None, **kwargs):
    return to_dlpack(self, stream)


def _dlpack_device(self):
    return (K_DL_CUDA, self.get_device())


Tensor.__dlpack__ = _dlpack
Tensor.__dlpack_device__ = _dlpack_device
