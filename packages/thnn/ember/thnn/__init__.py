"""ember.thnn: the binding of libTHNN, Ember's neural-network kernels.

One function per C kernel, taking and returning ember.th tensors (no
autograd); see README.md for the kernel argument order.  The functions
live in one module per layer family, named as libTHNN's sources
(_conv, _pool, _loss, _norm, _activation, _resample, _embedding, _rnn),
and are gathered here.  ``kernels`` is the object registered under the
entry point group ``ember.kernels`` (name ``cpu``); ember.nn's kernel
declarations (ember/nn/kernels/) run its functions.
"""
import os as _os

import ember.th as _th

from ._lib import check as _check, ffi as _ffi, lib as _lib  # noqa: F401
from ._args import NULL, REDUCTIONS, _empty, _p, _pair, _reduction, _window  # noqa: F401
from ._activation import *  # noqa: F401,F403  activations, softmax, dropout
from ._conv import *  # noqa: F401,F403  conv1d, conv2d, conv3d, conv_transpose2d
from ._embedding import *  # noqa: F401,F403  embedding, embedding_bag
from ._loss import *  # noqa: F401,F403  nll / cross-entropy, pointwise, kl_div, margin, cosine
from ._norm import *  # noqa: F401,F403  batch, layer and group norm
from ._pool import *  # noqa: F401,F403  max / avg / adaptive pooling in 1, 2 and 3 d
from ._resample import *  # noqa: F401,F403  upsampling, reflection / replication padding
from ._rnn import *  # noqa: F401,F403  recurrent cells (LSTM, GRU, RNN)

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
