"""Loads the cffi extension (after ember.th, which loads libTH) and binds
it as a KernelLibrary (see _library): ABI check, errors, pointers."""
import ember.th as _th  # loads libTH.so and OpenBLAS first

from ._library import KernelLibrary
from ._thnn_cffi import ffi, lib

ABI_MAJOR = 1  # the libTHNN major ABI version this binding was written for

LIBRARY = KernelLibrary(ffi, lib, "thnn", _th, "CPU", ABI_MAJOR)
check, last_error = LIBRARY.check, LIBRARY.last_error
