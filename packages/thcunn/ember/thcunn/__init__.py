"""ember.thcunn: the binding of libTHCUNN, Ember's neural-network kernels
for the GPU.

One function per C kernel, taking and returning ember.thc tensors (no
autograd), with ember.thnn's names and arguments; ``kernels`` is the
object registered under the entry point group ``ember.kernels`` (name
``cuda``), through which ember.nn runs them for CUDA tensors.
"""
import os as _os

import ember.thc as _thc

from ._args import NULL, REDUCTIONS, _empty, _p, _pair, _reduction, _window  # noqa: F401
from ._lib import check as _check, ffi as _ffi, lib as _lib

__version__ = _ffi.string(_lib.thcunn_version()).decode()
ACTIVATIONS = {"relu": 0, "leaky_relu": 1, "elu": 2, "selu": 3, "gelu": 4, "silu": 5,
               "sigmoid": 6, "tanh": 7, "softplus": 8, "hardtanh": 9, "hardswish": 10,
               "mish": 11}


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


# ---- conv2d --------------------------------------------------------------
def conv2d_forward(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    s, p, d = _pair(stride, "stride"), _pair(padding, "padding"), _pair(dilation, "dilation")
    if input.ndim == 4 and weight.ndim == 4:
        shape = (input.shape[0], weight.shape[0],
                 _window(input.shape[2], weight.shape[2], s[0], p[0], d[0], False),
                 _window(input.shape[3], weight.shape[3], s[1], p[1], d[1], False))
    else:
        shape = (0,)
    out = _empty(shape, input)
    _check(_lib.thcunn_conv2d_forward(_p(out), _p(input), _p(weight), _p(bias), s, p, d,
                                      groups))
    return out


def conv2d_backward_input(grad_output, input_shape, weight, stride=1, padding=0,
                          dilation=1, groups=1):
    gi = _empty(input_shape, grad_output)
    _check(_lib.thcunn_conv2d_backward_input(
        _p(gi), _p(grad_output), _p(weight), _pair(stride, "stride"),
        _pair(padding, "padding"), _pair(dilation, "dilation"), groups))
    return gi


def conv2d_backward_params(grad_output, input, weight_shape, stride=1, padding=0,
                           dilation=1, groups=1, need_weight=True, need_bias=True):
    """(grad_weight, grad_bias); either is None when not asked for."""
    gw = _empty(weight_shape, input) if need_weight else None
    gb = _empty((weight_shape[0],), input) if need_bias else None
    _check(_lib.thcunn_conv2d_backward_params(
        _p(gw), _p(gb), _p(grad_output), _p(input), _pair(stride, "stride"),
        _pair(padding, "padding"), _pair(dilation, "dilation"), groups))
    return gw, gb


# ---- pooling -------------------------------------------------------------
def _pool_shape(input, k, s, p, d, ceil_mode):
    if input.ndim not in (3, 4):
        return (0,)
    return tuple(input.shape[:-2]) + (_window(input.shape[-2], k[0], s[0], p[0], d[0], ceil_mode),
                                      _window(input.shape[-1], k[1], s[1], p[1], d[1], ceil_mode))


def _stride(stride, k):
    return k if stride is None or stride == [] else _pair(stride, "stride")


def max_pool2d_forward(input, kernel_size, stride=None, padding=0, dilation=1,
                       ceil_mode=False):
    """(output, indices)"""
    k = _pair(kernel_size, "kernel_size")
    s, p, d = _stride(stride, k), _pair(padding, "padding"), _pair(dilation, "dilation")
    shape = _pool_shape(input, k, s, p, d, ceil_mode)
    out, ind = _empty(shape, input), _empty(shape, input, _thc.int64)
    _check(_lib.thcunn_max_pool2d_forward(_p(out), _p(ind), _p(input), k, s, p, d,
                                          int(ceil_mode)))
    return out, ind


def max_pool2d_backward_input(grad_output, input_shape, indices):
    gi = _empty(input_shape, grad_output)
    _check(_lib.thcunn_max_pool2d_backward_input(_p(gi), _p(grad_output), _p(indices)))
    return gi


def avg_pool2d_forward(input, kernel_size, stride=None, padding=0, ceil_mode=False,
                       count_include_pad=True):
    k = _pair(kernel_size, "kernel_size")
    s, p = _stride(stride, k), _pair(padding, "padding")
    out = _empty(_pool_shape(input, k, s, p, (1, 1), ceil_mode), input)
    _check(_lib.thcunn_avg_pool2d_forward(_p(out), _p(input), k, s, p, int(ceil_mode),
                                          int(count_include_pad)))
    return out


def avg_pool2d_backward_input(grad_output, input_shape, kernel_size, stride=None, padding=0,
                              ceil_mode=False, count_include_pad=True):
    k = _pair(kernel_size, "kernel_size")
    gi = _empty(input_shape, grad_output)
    _check(_lib.thcunn_avg_pool2d_backward_input(_p(gi), _p(grad_output), k, _stride(stride, k),
                                                 _pair(padding, "padding"), int(ceil_mode),
                                                 int(count_include_pad)))
    return gi


# ---- softmax -------------------------------------------------------------
def softmax_forward(input, dim):
    out = _empty(input.shape, input)
    _check(_lib.thcunn_softmax_forward(_p(out), _p(input), dim))
    return out


def softmax_backward_input(grad_output, output, dim):
    gi = _empty(output.shape, output)
    _check(_lib.thcunn_softmax_backward_input(_p(gi), _p(grad_output), _p(output), dim))
    return gi


def log_softmax_forward(input, dim):
    out = _empty(input.shape, input)
    _check(_lib.thcunn_log_softmax_forward(_p(out), _p(input), dim))
    return out


def log_softmax_backward_input(grad_output, output, dim):
    gi = _empty(output.shape, output)
    _check(_lib.thcunn_log_softmax_backward_input(_p(gi), _p(grad_output), _p(output), dim))
    return gi


# ---- losses --------------------------------------------------------------
def nll_loss_forward(input, target, weight=None, reduction="mean", ignore_index=-100):
    """(output, total_weight)"""
    r = _reduction(reduction)
    out = _empty(tuple(target.shape) if r == 0 else (), input)
    tw = _empty((), input)
    _check(_lib.thcunn_nll_loss_forward(_p(out), _p(tw), _p(input), _p(target), _p(weight), r,
                                        ignore_index))
    return out, tw


def nll_loss_backward_input(grad_output, input_shape, target, weight, total_weight,
                            reduction="mean", ignore_index=-100):
    gi = _empty(input_shape, grad_output)
    _check(_lib.thcunn_nll_loss_backward_input(_p(gi), _p(grad_output), _p(target), _p(weight),
                                               _p(total_weight), _reduction(reduction),
                                               ignore_index))
    return gi


def cross_entropy_forward(input, target, weight=None, reduction="mean", ignore_index=-100):
    """(output, log_probs, total_weight): log_softmax over dim 1, then nll."""
    lp = log_softmax_forward(input, 1 if input.ndim > 1 else 0)
    out, tw = nll_loss_forward(lp, target, weight, reduction, ignore_index)
    return out, lp, tw


def cross_entropy_backward_input(grad_output, log_probs, target, weight, total_weight,
                                 reduction="mean", ignore_index=-100):
    g = nll_loss_backward_input(grad_output, log_probs.shape, target, weight, total_weight,
                                reduction, ignore_index)
    return log_softmax_backward_input(g, log_probs, 1 if log_probs.ndim > 1 else 0)


# ---- batch norm ----------------------------------------------------------
def batch_norm_forward(input, weight=None, bias=None, running_mean=None, running_var=None,
                       training=True, momentum=0.1, eps=1e-5):
    """(output, save_mean, save_invstd); running stats updated in place."""
    c = input.shape[1] if input.ndim >= 2 else 0
    out, m, s = _empty(input.shape, input), _empty((c,), input), _empty((c,), input)
    _check(_lib.thcunn_batch_norm_forward(_p(out), _p(m), _p(s), _p(running_mean),
                                          _p(running_var), _p(input), _p(weight), _p(bias),
                                          int(training), momentum, eps))
    return out, m, s


def batch_norm_backward_input(grad_output, input, weight, save_mean, save_invstd,
                              training=True):
    gi = _empty(input.shape, input)
    _check(_lib.thcunn_batch_norm_backward_input(_p(gi), _p(grad_output), _p(input), _p(weight),
                                                 _p(save_mean), _p(save_invstd),
                                                 int(training)))
    return gi


def batch_norm_backward_params(grad_output, input, save_mean, save_invstd,
                               need_weight=True, need_bias=True):
    c = input.shape[1]
    gw = _empty((c,), input) if need_weight else None
    gb = _empty((c,), input) if need_bias else None
    _check(_lib.thcunn_batch_norm_backward_params(_p(gw), _p(gb), _p(grad_output), _p(input),
                                                  _p(save_mean), _p(save_invstd)))
    return gw, gb


# ---- activations ---------------------------------------------------------
def activation_forward(name, input, a=0.0, b=0.0):
    out = _empty(input.shape, input)
    _check(_lib.thcunn_activation_forward(_p(out), _p(input), ACTIVATIONS[name], a, b))
    return out


def activation_backward_input(name, grad_output, input, a=0.0, b=0.0):
    gi = _empty(input.shape, input)
    _check(_lib.thcunn_activation_backward_input(_p(gi), _p(grad_output), _p(input),
                                                 ACTIVATIONS[name], a, b))
    return gi


from ._resample import *  # noqa: F401,F403  upsampling, reflection/replication padding
from ._loss_more import *  # noqa: F401,F403  pointwise, kl_div, margin_ranking, cosine losses
from ._norm import *  # noqa: F401,F403  layer_norm, group_norm, dropout
from ._embedding import *  # noqa: F401,F403  embedding, embedding_bag
from ._pool_more import *  # noqa: F401,F403  adaptive, 3-d and 1-d pooling
from ._conv_more import *  # noqa: F401,F403  conv1d, conv3d, conv_transpose2d


class _Kernels:
    """The ``ember.kernels`` entry point: this module's functions by name
    (ember.nn's kernel table in ember/nn/_kernel_specs.py runs them)."""
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
