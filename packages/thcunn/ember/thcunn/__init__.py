"""ember.thcunn: the binding of libTHCUNN, Ember's neural-network kernels
for the GPU.

One function per C kernel, taking and returning ember.thc tensors (no
autograd), with ember.thnn's names and arguments: ember.thnn's family
modules (_conv, _pool, _loss, _norm, _activation, _resample, _embedding,
named as libTHCUNN's sources) bound to libTHCUNN here.
``kernels`` is the object registered under the entry point group
``ember.kernels`` (name ``cuda``), through which ember.nn runs them for
CUDA tensors.
"""
import os as _os

import ember.thc as _thc

from ember.thnn import _families

from ._lib import LIBRARY as _LIBRARY, check as _check, ffi as _ffi, lib as _lib  # noqa: F401

NULL, _p = _ffi.NULL, _LIBRARY.ptr
globals().update(_families.bind(_LIBRARY))

__version__ = _ffi.string(_lib.thcunn_version()).decode()


def abi_version():
    """(major, minor) of the loaded libTHCUNN."""
    return _lib.thcunn_abi_version_major(), _lib.thcunn_abi_version_minor()


def built_with_cuda():
    """False for a host-only build (runs on libTHC's emulated device only)."""
    return bool(_lib.thcunn_has_cuda())


def get_include():
    """Folder holding thcunn.h (thc.h is in ember.thc.get_include())."""
    return _os.path.join(_os.path.dirname(__file__), "include")


def get_lib_dir():
    """Folder holding libTHCUNN.so and pkgconfig/thcunn.pc."""
    return _os.path.join(_os.path.dirname(__file__), "lib")


class _Kernels:
    """The ``ember.kernels`` entry point: this module's functions by name
    (the kernel declarations of ember.nn, ember/nn/kernels/, run them)."""
    name = "cuda"
    api_version = 1

    @property
    def tensor_type(self):  # the raw tensors the kernels compute on
        return _thc.Tensor

    @property
    def float_dtypes(self):  # what the kernels take
        return (_thc.float32, _thc.float64)

    def __getattr__(self, name):
        g = globals()
        if name.startswith("_") or name not in g:
            raise AttributeError(f"ember.thcunn has no kernel {name!r}")
        # on a machine with several devices, run on the tensors' device
        return _thc.device_guard(g[name])


kernels = _Kernels()
