"""ember.thnn: the binding of libTHNN, Ember's neural-network kernels.

One function per C kernel, taking and returning ember.th tensors (no
autograd); see README.md for the kernel argument order.  The functions
are written in one module per layer family, named as libTHNN's sources
(_conv, _pool, _loss, _norm, _activation, _resample, _embedding, _rnn),
each as ``define(L)`` over a KernelLibrary (_library), and bound here to
libTHNN (_families); ember.thcunn binds the same modules to libTHCUNN.
``kernels`` is the object registered under the entry point group
``ember.kernels`` (name ``cpu``); ember.nn's kernel declarations
(ember/nn/kernels/) run its functions.
"""
import os as _os

import ember.th as _th

from . import _families
from ._lib import LIBRARY as _LIBRARY, check as _check, ffi as _ffi, lib as _lib  # noqa: F401
from ._rnn import *  # noqa: F401,F403  recurrent cells (LSTM, GRU, RNN)

NULL, _p = _ffi.NULL, _LIBRARY.ptr
globals().update(_families.bind(_LIBRARY))

__version__ = _ffi.string(_lib.thnn_version()).decode()


def abi_version():
    """(major, minor) of the loaded libTHNN."""
    return _lib.thnn_abi_version_major(), _lib.thnn_abi_version_minor()


def get_include():
    """Folder holding thnn.h (th.h is in ember.th.get_include())."""
    return _os.path.join(_os.path.dirname(__file__), "include")


def get_lib_dir():
    """Folder holding libTHNN.so and pkgconfig/thnn.pc."""
    return _os.path.join(_os.path.dirname(__file__), "lib")


class _Kernels:
    """The ``ember.kernels`` entry point: this module's functions by name
    (the kernel declarations of ember/nn/kernels/ run them)."""
    name = "cpu"
    api_version = 1
    tensor_type = _th.Tensor  # the raw tensors the kernels compute on
    float_dtypes = (_th.float32, _th.float64)  # what the kernels take

    def __getattr__(self, name):
        g = globals()
        if name.startswith("_") or name not in g:
            raise AttributeError(f"ember.thnn has no kernel {name!r}")
        return g[name]


kernels = _Kernels()
