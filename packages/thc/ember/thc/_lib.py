"""Loads the cffi extension, checks libTHC's ABI, and turns C errors into
Python exceptions."""
from ._thc_cffi import ffi, lib

ABI_MAJOR = 1  # the libTHC major ABI version this binding was written for

if lib.thc_abi_version_major() != ABI_MAJOR:  # pragma: no cover - guards upgrades
    raise ImportError(
        f"ember.thc binding expects libTHC ABI {ABI_MAJOR}.x but loaded "
        f"{lib.thc_abi_version_major()}.{lib.thc_abi_version_minor()}; "
        "reinstall ember-thc so the library and binding match")


class OutOfMemoryError(RuntimeError, MemoryError):
    """The device ran out of memory (a RuntimeError, as in PyTorch, and a
    MemoryError)."""


_EXCEPTIONS = {
    lib.THC_ERR_VALUE: ValueError,
    lib.THC_ERR_INDEX: IndexError,
    lib.THC_ERR_TYPE: TypeError,
    lib.THC_ERR_RUNTIME: RuntimeError,
    lib.THC_ERR_MEMORY: OutOfMemoryError,
    lib.THC_ERR_NOT_IMPLEMENTED: NotImplementedError,
}


def check(status: int) -> None:
    """Raises the exception for a libTHC status, with its last-error text."""
    if status != lib.THC_OK:
        message = ffi.string(lib.thc_last_error()).decode(errors="replace")
        raise _EXCEPTIONS.get(status, RuntimeError)(message or f"libTHC status {status}")


def _cublas_from_wheel():
    """libcublas of the nvidia-cublas wheel (CUDA 13's, else 12's), if
    installed (the dynamic linker does not look inside site-packages)."""
    import importlib.util
    import os
    try:
        spec = importlib.util.find_spec("nvidia")
    except (ImportError, ValueError):
        return None
    roots = (spec.submodule_search_locations or []) if spec else []
    for name in ("libcublas.so.13", "libcublas.so.12"):
        for root in roots:
            for sub in ("cu13/lib", "cublas/lib"):
                path = os.path.join(root, sub, name)
                if os.path.exists(path):
                    return path
    return None


if lib.thc_has_cuda():
    _path = _cublas_from_wheel()
    if _path:
        lib.thc_cublas_set_path(_path.encode())
