"""Loads the cffi extension (after ember.thc, which loads libTHC), checks
libTHCUNN's ABI and turns C errors into Python exceptions."""
import ember.thc  # noqa: F401  - loads libTHC.so first

from ._thcunn_cffi import ffi, lib

ABI_MAJOR = 1  # the libTHCUNN major ABI version this binding was written for

if lib.thcunn_abi_version_major() != ABI_MAJOR:  # pragma: no cover - guards upgrades
    raise ImportError(
        f"ember.thcunn binding expects libTHCUNN ABI {ABI_MAJOR}.x but loaded "
        f"{lib.thcunn_abi_version_major()}.{lib.thcunn_abi_version_minor()}; "
        "reinstall ember-thcunn so the library and binding match")

_EXCEPTIONS = {1: ValueError, 2: IndexError, 3: TypeError, 4: RuntimeError,
               5: MemoryError, 6: NotImplementedError}


def last_error() -> BaseException:
    msg = ffi.string(lib.thcunn_last_error()).decode("utf-8", "replace")
    return _EXCEPTIONS.get(lib.thcunn_last_status(), RuntimeError)(msg)


def check(rc: int) -> None:
    if rc:
        raise last_error()
