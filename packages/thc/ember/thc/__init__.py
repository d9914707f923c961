"""ember.thc: the binding of libTHC, Ember's GPU backend (CUDA).

What exists so far: device query, current device, synchronization, the
caching device allocator and its statistics.  Without a GPU (or a driver)
``device_count()`` is 0 and ``is_available()`` is False; the reason is in
``cuda_error_text()``.  Tensors on the GPU do not exist yet: see the README.
"""
from ._lib import OutOfMemoryError, check as _check, ffi as _ffi, lib as _lib
from ._allocator import CachingAllocator, round_size

__version__ = _ffi.string(_lib.thc_version()).decode()

__all__ = ["CachingAllocator", "OutOfMemoryError", "round_size", "built_with_cuda",
           "device_count", "is_available", "cuda_error_text", "current_device",
           "set_device", "synchronize", "memory_stats", "memory_allocated",
           "max_memory_allocated", "memory_reserved", "max_memory_reserved",
           "reset_peak_memory_stats", "empty_cache"]


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


def set_device(device):
    if isinstance(device, bool) or not isinstance(device, int):
        raise TypeError(f"set_device expects a device index (int), got {type(device).__name__}")
    _require_device("set_device")
    _check(_lib.thc_set_device(device))


def synchronize():
    _require_device("synchronize")
    _check(_lib.thc_synchronize())


_default_allocator = None


def _allocator():
    """The process's allocator over the CUDA runtime, made on first use."""
    global _default_allocator
    if _default_allocator is None:
        _require_device("the CUDA caching allocator")
        _default_allocator = CachingAllocator()
    return _default_allocator


def memory_stats():
    return _allocator().stats()


def memory_allocated():
    return _allocator().stats()["allocated_bytes"]


def max_memory_allocated():
    return _allocator().stats()["max_allocated_bytes"]


def memory_reserved():
    return _allocator().stats()["reserved_bytes"]


def max_memory_reserved():
    return _allocator().stats()["max_reserved_bytes"]


def reset_peak_memory_stats():
    _allocator().reset_peak_stats()


def empty_cache():
    # nothing is cached before the allocator's first use, on any machine
    if _default_allocator is not None:
        _default_allocator.empty_cache()
