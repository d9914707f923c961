"""ember.thc: the binding of libTHC, Ember's GPU backend (CUDA).

Device query, current device, synchronization, the caching device
allocator and its statistics, and raw GPU tensors (``ember.thc.Tensor``,
no autograd) with PyTorch's names: ``ember.thc.randn(3, 4)``,
``ember.thc.tensor([1, 2])``, ...  Without a GPU (or a driver)
``device_count()`` is 0 and ``is_available()`` is False; the reason is in
``cuda_error_text()``.

The tensor functions load on first use (module ``__getattr__``), so that
``import ember.thc`` stays cheap and works on machines without a device.
"""
import builtins as _builtins

from ._lib import OutOfMemoryError, check as _check, ffi as _ffi, lib as _lib
from ._allocator import CachingAllocator, round_size
from ._streams import Event, Stream, current_stream, default_stream, set_stream, stream

__version__ = _ffi.string(_lib.thc_version()).decode()

__all__ = ["CachingAllocator", "OutOfMemoryError", "round_size", "built_with_cuda",
           "device_count", "is_available", "cuda_error_text", "current_device",
           "set_device", "device", "device_guard", "synchronize", "memory_stats",
           "memory_allocated",
           "max_memory_allocated", "memory_reserved", "max_memory_reserved",
           "reset_peak_memory_stats", "empty_cache", "get_include", "get_lib_dir",
           "is_emulated", "cublas_available", "Stream", "Event", "current_stream",
           "default_stream", "set_stream", "stream", "get_device_properties",
           "get_device_name", "get_device_capability", "mem_get_info", "cublas_error_text",
           "set_float32_matmul_tf32", "float32_matmul_tf32", "arch_list"]


def get_include():
    """Folder holding thc.h, for building C code against libTHC."""
    import os
    return os.path.join(os.path.dirname(__file__), "include")


def get_lib_dir():
    """Folder holding libTHC.so (and pkgconfig/thc.pc)."""
    import os
    return os.path.join(os.path.dirname(__file__), "lib")


def is_emulated():
    """True on a host-only build run with EMBER_THC_EMULATE=1: one device
    whose memory is host memory (for tests)."""
    return bool(_lib.thc_is_emulated())


def cublas_available():
    """True when matrix products run through cuBLAS (loaded on first use)."""
    return bool(_lib.thc_cublas_available())


def set_float32_matmul_tf32(allow):
    """Lets float32 matrix products through cuBLAS round their inputs to
    TF32 on GPUs with TF32 tensor cores (off by default; process-wide)."""
    _lib.thc_set_float32_matmul_tf32(bool(allow))


def float32_matmul_tf32():
    return bool(_lib.thc_float32_matmul_tf32())


def arch_list():
    """The GPU code built into libTHC: ['sm_75', ..., 'compute_90'] (machine
    code per generation, PTX for later ones); [] without CUDA."""
    return _ffi.string(_lib.thc_arch_list()).decode().split()


def built_with_cuda():
    """False for a host-side-only build (EMBER_NO_CUDA=1)."""
    return bool(_lib.thc_has_cuda())


def device_count():
    """Number of CUDA devices; 0 without a GPU, driver or CUDA build."""
    n = _ffi.new("int *")
    _check(_lib.thc_device_count(n))
    return n[0]


def is_available():
    return device_count() > 0


def cuda_error_text():
    """Why no device was found (the CUDA runtime's text), or ''."""
    return _ffi.string(_lib.thc_cuda_error_text()).decode(errors="replace")


def _require_device(what):
    if not is_available():
        raise RuntimeError(f"{what}: no CUDA device is available ({cuda_error_text()})")


def current_device():
    _require_device("current_device")
    d = _ffi.new("int *")
    _check(_lib.thc_get_device(d))
    return d[0]


def device_guard(fn):
    """`fn` running with the device of its first CUDA tensor argument
    current, on a machine with several devices (fn itself otherwise): for
    libraries calling libTHC-based kernels, such as ember.thcunn."""
    from ._device_guard import guarded
    from ._functions import Tensor
    return guarded(fn, Tensor)


def device(index):
    """Context manager making CUDA device `index` (an int, 'cuda:1', an
    ember.device; None: no change) current inside the block: new tensors
    go there, and libTHC runs work only on tensors of the current device."""
    from ._functions import _on
    return _on(index)


def set_device(device):
    if isinstance(device, bool) or not isinstance(device, int):
        raise TypeError(f"set_device expects a device index (int), got {type(device).__name__}")
    _require_device("set_device")
    _check(_lib.thc_set_device(device))


class DeviceProperties:
    """What a device is (``get_device_properties``)."""

    __slots__ = ("name", "total_memory", "major", "minor", "multi_processor_count")

    def __init__(self, props):
        self.name = _ffi.string(props.name).decode(errors="replace")
        self.total_memory = props.total_memory
        self.major, self.minor = props.major, props.minor
        self.multi_processor_count = props.multi_processor_count

    def __repr__(self):
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, "
                f"minor={self.minor}, total_memory={self.total_memory >> 20}MB, "
                f"multi_processor_count={self.multi_processor_count})")


def _device_index(device):
    from ._device_guard import device_index
    index = device_index(device)
    return current_device() if index is None else index


def get_device_properties(device=None):
    _require_device("get_device_properties")
    p = _ffi.new("thc_device_props *")
    _check(_lib.thc_device_properties(_device_index(device), p))
    return DeviceProperties(p)


def get_device_name(device=None):
    return get_device_properties(device).name


def get_device_capability(device=None):
    p = get_device_properties(device)
    return p.major, p.minor


def mem_get_info(device=None):
    """(free, total) bytes of the current device."""
    _require_device("mem_get_info")
    f, t = _ffi.new("int64_t *"), _ffi.new("int64_t *")
    _check(_lib.thc_mem_get_info(f, t))
    return f[0], t[0]


def cublas_error_text():
    """Why cuBLAS is not used ('' when it is)."""
    return _ffi.string(_lib.thc_cublas_error_text()).decode(errors="replace")


def synchronize():
    _require_device("synchronize")
    _check(_lib.thc_synchronize())


def _device_allocator(device=None):
    """The caching allocator that a device's tensors come from (libTHC's,
    made on first use); None: the current device's."""
    _require_device("the CUDA caching allocator")
    a = _lib.thc_device_allocator(_device_index(device))
    if a == _ffi.NULL:
        _check(_lib.thc_last_status())
    return a


def memory_stats(device=None):
    """A device's allocator counters (tensors' memory), as a dict."""
    from ._allocator import _STAT_FIELDS
    s = _ffi.new("thc_alloc_stats *")
    _check(_lib.thc_allocator_stats(_device_allocator(device), s))
    return {name: getattr(s, name) for name in _STAT_FIELDS}


def memory_allocated(device=None):
    return memory_stats(device)["allocated_bytes"]


def max_memory_allocated(device=None):
    return memory_stats(device)["max_allocated_bytes"]


def memory_reserved(device=None):
    return memory_stats(device)["reserved_bytes"]


def max_memory_reserved(device=None):
    return memory_stats(device)["max_reserved_bytes"]


def reset_peak_memory_stats(device=None):
    _check(_lib.thc_allocator_reset_peak_stats(_device_allocator(device)))


def empty_cache():
    """Gives cached, unused device memory back to the driver; a no-op
    without a device."""
    if device_count() > 0:
        _check(_lib.thc_allocator_empty_cache(_device_allocator()))


def __getattr__(name):
    """The tensor API (Tensor, tensor, zeros, randn, cat, ...), loaded from
    _functions on the first access to one of its names."""
    if name.startswith("_"):  # submodules and dunders: the import system's
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from ._functions import namespace
    try:
        value = namespace[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    # later lookups skip this function; names of builtins (bool, float, int)
    # are not cached, or this module's own code would see the dtypes
    if not hasattr(_builtins, name):
        globals()[name] = value
    return value


def __dir__():
    from ._functions import namespace
    return sorted(set(globals()) | set(namespace))
