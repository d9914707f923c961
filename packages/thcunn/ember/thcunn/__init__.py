"""ember.thcunn: the binding of libTHCUNN, Ember's neural-network kernels
for the GPU.

One function per C kernel, taking and returning ember.thc tensors (no
autograd), with ember.thnn's names and arguments, in one module per layer
family named as libTHCUNN's sources and ember.thnn's modules (_conv,
_pool, _loss, _norm, _activation, _resample, _embedding), gathered here.
``kernels`` is the object registered under the entry point group
``ember.kernels`` (name ``cuda``), through which ember.nn runs them for
CUDA tensors.
"""
import os as _os

import ember.thc as _thc

from ._lib import check as _check, ffi as _ffi, lib as _lib  # noqa: F401
from ._args import NULL, REDUCTIONS, _empty, _p, _pair, _reduction, _window  # noqa: F401
from ._activation import *  # noqa: F401,F403  activations, softmax, dropout
from ._conv import *  # noqa: F401,F403  conv1d, conv2d, conv3d, conv_transpose2d
from ._embedding import *  # noqa: F401,F403  embedding, embedding_bag
from ._loss import *  # noqa: F401,F403  nll / cross-entropy, pointwise, kl_div, margin, cosine
from ._norm import *  # noqa: F401,F403  batch, layer and group norm
from ._pool import *  # noqa: F401,F403  max / avg / adaptive pooling in 1, 2 and 3 d
from ._resample import *  # noqa: F401,F403  upsampling, reflection / replication padding

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
