"""Loads the cffi extension (after ember.thc, which loads libTHC) and binds
it as ember.thnn's KernelLibrary: ABI check, errors, pointers."""
import ember.thc as _thc  # loads libTHC.so first
from ember.thnn._library import KernelLibrary

from ._thcunn_cffi import ffi, lib

ABI_MAJOR = 1  # the libTHCUNN major ABI version this binding was written for

LIBRARY = KernelLibrary(ffi, lib, "thcunn", _thc, "CUDA", ABI_MAJOR)
check, last_error = LIBRARY.check, LIBRARY.last_error
