"""Loads the cffi extension, checks libTH's ABI, and turns C errors into
Python exceptions."""

try:
    from ._th_cffi import ffi, lib
except ImportError as e:
    # libTH finds OpenBLAS through its rpath when scipy-openblas32 sits in
    # the same site folder; otherwise (installed apart) load it by path
    # first.  Not imported up front: scipy_openblas32's import costs 30 ms.
    if "libscipy_openblas" not in str(e):
        raise
    import ctypes
    import os

    import scipy_openblas32
    ctypes.CDLL(os.path.join(scipy_openblas32.get_lib_dir(), "libscipy_openblas.so"),
                mode=ctypes.RTLD_GLOBAL)
    from ._th_cffi import ffi, lib

ABI_MAJOR = 1  # the libTH major ABI version this binding was written for

if lib.th_abi_version_major() != ABI_MAJOR:  # pragma: no cover - guards upgrades
    raise ImportError(
        f"ember.th binding expects libTH ABI {ABI_MAJOR}.x but loaded "
        f"{lib.th_abi_version_major()}.{lib.th_abi_version_minor()}; "
        "reinstall ember-th so the library and binding match")

NULL = ffi.NULL

_EXCEPTIONS = {
    lib.TH_ERR_VALUE: ValueError,
    lib.TH_ERR_INDEX: IndexError,
    lib.TH_ERR_TYPE: TypeError,
    lib.TH_ERR_RUNTIME: RuntimeError,
    lib.TH_ERR_MEMORY: MemoryError,
    lib.TH_ERR_NOT_IMPLEMENTED: NotImplementedError,
}


def last_error() -> BaseException:
    """The exception for the C library's last error on this thread."""
    msg = ffi.string(lib.th_last_error()).decode("utf-8", "replace")
    return _EXCEPTIONS.get(lib.th_last_status(), RuntimeError)(msg)


def check(rc: int) -> None:
    """Raise the matching exception when a C call returned a status."""
    if rc:
        raise last_error()


# Keeps Python objects (NumPy arrays) alive while C storages wrap their
# memory; the storage's release callback drops them.
_keepalive = {}


@ffi.def_extern()
def _ember_th_release(ctx, data):
    _keepalive.pop(int(ffi.cast("uintptr_t", ctx)), None)


def wrap_memory(owner, address: int, nbytes: int):
    """A C storage over memory that `owner` keeps alive."""
    handle = ffi.new_handle(owner)
    key = int(ffi.cast("uintptr_t", handle))
    _keepalive[key] = handle
    s = lib.th_storage_wrap(ffi.cast("void *", address), nbytes,
                            lib._ember_th_release, handle)
    if not s:
        _keepalive.pop(key, None)
        raise last_error()
    return s
