"""Loads the cffi extension (after ember.th, which loads libTH), checks
libTHNN's ABI and turns C errors into Python exceptions."""
import ember.th  # noqa: F401  - loads libTH.so and OpenBLAS first

from ._thnn_cffi import ffi, lib

ABI_MAJOR = 1  # the libTHNN major ABI version this binding was written for

if lib.thnn_abi_version_major() != ABI_MAJOR:  # pragma: no cover - guards upgrades
    raise ImportError(
        f"ember.thnn binding expects libTHNN ABI {ABI_MAJOR}.x but loaded "
        f"{lib.thnn_abi_version_major()}.{lib.thnn_abi_version_minor()}; "
        "reinstall ember-thnn so the library and binding match")

_EXCEPTIONS = {1: ValueError, 2: IndexError, 3: TypeError, 4: RuntimeError,
               5: MemoryError, 6: NotImplementedError}


def last_error() -> BaseException:
    msg = ffi.string(lib.thnn_last_error()).decode("utf-8", "replace")
    return _EXCEPTIONS.get(lib.thnn_last_status(), RuntimeError)(msg)


def check(rc: int) -> None:
    if rc:
        raise last_error()
