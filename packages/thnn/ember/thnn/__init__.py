"""ember.thnn: the binding of libTHNN, Ember's neural-network kernels.

One function per C kernel, taking and returning ember.th tensors (no
autograd); see README.md for the kernel argument order.  ``kernels`` is
the object registered under the entry point group ``ember.kernels``
(name ``cpu``).
"""
import os as _os

import ember.th as _th

from ._lib import check as _check, ffi as _ffi, lib as _lib
from ._conv_pool_more import *  # noqa: F401,F403  conv3d, conv_transpose2d, 3-d / 1-d / adaptive max pooling
from ._norm_resample_more import *  # noqa: F401,F403  group norm, upsampling, padding, embedding_bag, more losses
from ._rnn import *  # noqa: F401,F403  recurrent cells (LSTM, GRU, RNN)

__version__ = _ffi.string(_lib.thnn_version()).decode()
NULL = _ffi.NULL
REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}
ACTIVATIONS = {"relu": 0, "leaky_relu": 1, "elu": 2, "selu": 3, "gelu": 4, "silu": 5,
               "sigmoid": 6, "tanh": 7, "softplus": 8, "hardtanh": 9, "hardswish": 10,
               "mish": 11}
POINTWISE_LOSSES = {"mse": 0, "l1": 1, "smooth_l1": 2, "huber": 3, "bce": 4,
                    "bce_with_logits": 5}


def abi_version():
    """(major, minor) of the loaded libTHNN."""
    return _lib.thnn_abi_version_major(), _lib.thnn_abi_version_minor()


def get_include():
    """Folder holding thnn.h (th.h is in ember.th.get_include())."""
    return _os.path.join(_os.path.dirname(__file__), "include")


def get_lib_dir():
    """Folder holding libTHNN.so and pkgconfig/thnn.pc."""
    return _os.path.join(_os.path.dirname(__file__), "lib")


def _p(t):
    return NULL if t is None else t._p


def _pair(v, name):
    if isinstance(v, int):
        return [v, v]
    v = list(v)
    if len(v) == 1:
        return v * 2
    if len(v) != 2 or not all(isinstance(i, int) for i in v):
        raise ValueError(f"{name} must be an int or a pair of ints, got {v!r}")
    return v


def _empty(shape, like, dtype=None):
    return _th.empty(*shape, dtype=dtype or like.dtype) if shape else \
        _th.empty((), dtype=dtype or like.dtype)


def _window(n, k, s, p, d, ceil):
    r = _lib.thnn_window_output_size(n, k, s, p, d, ceil)
    if r < 0:
        _check(_lib.thnn_last_status() or 4)
    return r


# ---- conv2d ------------------------------------------------------------
def conv2d_forward(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    s, p, d = _pair(stride, "stride"), _pair(padding, "padding"), _pair(dilation, "dilation")
    if input.ndim == 4 and weight.ndim == 4:
        oh = _lib.thnn_window_output_size(input.shape[2], weight.shape[2], s[0], p[0], d[0], 0)
        ow = _lib.thnn_window_output_size(input.shape[3], weight.shape[3], s[1], p[1], d[1], 0)
        shape = (input.shape[0], weight.shape[0], max(oh, 0), max(ow, 0))
    else:
        shape = (0,)
    out = _empty(shape, input)
    _check(_lib.thnn_conv2d_forward(out._p, input._p, weight._p, _p(bias), s, p, d, groups))
    return out


def conv2d_backward_input(grad_output, input_shape, weight, stride=1, padding=0,
                          dilation=1, groups=1):
    gi = _empty(tuple(input_shape), grad_output)
    _check(_lib.thnn_conv2d_backward_input(
        gi._p, grad_output._p, weight._p, _pair(stride, "stride"),
        _pair(padding, "padding"), _pair(dilation, "dilation"), groups))
    return gi


def conv2d_backward_params(grad_output, input, weight_shape, stride=1, padding=0,
                           dilation=1, groups=1, need_weight=True, need_bias=True):
    """(grad_weight, grad_bias); either is None when not asked for."""
    gw = _empty(tuple(weight_shape), input) if need_weight else None
    gb = _empty((weight_shape[0],), input) if need_bias else None
    _check(_lib.thnn_conv2d_backward_params(
        _p(gw), _p(gb), grad_output._p, input._p, _pair(stride, "stride"),
        _pair(padding, "padding"), _pair(dilation, "dilation"), groups))
    return gw, gb


# ---- conv1d ------------------------------------------------------------
def _single(v, name):
    if isinstance(v, int):
        return v
    v = list(v)
    if len(v) != 1 or not isinstance(v[0], int):
        raise ValueError(f"{name} must be an int or a 1-tuple of ints, got {v!r}")
    return v[0]


def conv1d_forward(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    s, p, d = _single(stride, "stride"), _single(padding, "padding"), _single(dilation, "dilation")
    if input.ndim == 3 and weight.ndim == 3:
        ol = _lib.thnn_window_output_size(input.shape[2], weight.shape[2], s, p, d, 0)
        shape = (input.shape[0], weight.shape[0], max(ol, 0))
    else:
        shape = (0, 0, 0)
    out = _empty(shape, input)
    _check(_lib.thnn_conv1d_forward(out._p, input._p, weight._p, _p(bias), s, p, d, groups))
    return out


def conv1d_backward_input(grad_output, input_shape, weight, stride=1, padding=0,
                          dilation=1, groups=1):
    gi = _empty(tuple(input_shape), grad_output)
    _check(_lib.thnn_conv1d_backward_input(
        gi._p, grad_output._p, weight._p, _single(stride, "stride"),
        _single(padding, "padding"), _single(dilation, "dilation"), groups))
    return gi


def conv1d_backward_params(grad_output, input, weight_shape, stride=1, padding=0,
                           dilation=1, groups=1, need_weight=True, need_bias=True):
    gw = _empty(tuple(weight_shape), input) if need_weight else None
    gb = _empty((weight_shape[0],), input) if need_bias else None
    _check(_lib.thnn_conv1d_backward_params(
        _p(gw), _p(gb), grad_output._p, input._p, _single(stride, "stride"),
        _single(padding, "padding"), _single(dilation, "dilation"), groups))
    return gw, gb


# ---- pooling -----------------------------------------------------------
def _pool_shape(input, k, s, p, d, ceil_mode):
    if input.ndim not in (3, 4):
        return (0,)
    h = _window(input.shape[-2], k[0], s[0], p[0], d[0], int(ceil_mode))
    w = _window(input.shape[-1], k[1], s[1], p[1], d[1], int(ceil_mode))
    return tuple(input.shape[:-2]) + (h, w)


def max_pool2d_forward(input, kernel_size, stride=None, padding=0, dilation=1,
                       ceil_mode=False):
    """(output, indices)"""
    k = _pair(kernel_size, "kernel_size")
    s = k if stride is None or stride == [] else _pair(stride, "stride")
    p, d = _pair(padding, "padding"), _pair(dilation, "dilation")
    shape = _pool_shape(input, k, s, p, d, ceil_mode)
    out, ind = _empty(shape, input), _empty(shape, input, _th.int64)
    _check(_lib.thnn_max_pool2d_forward(out._p, ind._p, input._p, k, s, p, d, int(ceil_mode)))
    return out, ind


def max_pool2d_backward_input(grad_output, input_shape, indices):
    gi = _empty(tuple(input_shape), grad_output)
    _check(_lib.thnn_max_pool2d_backward_input(gi._p, grad_output._p, indices._p))
    return gi


def avg_pool2d_forward(input, kernel_size, stride=None, padding=0, ceil_mode=False,
                       count_include_pad=True):
    k = _pair(kernel_size, "kernel_size")
    s = k if stride is None or stride == [] else _pair(stride, "stride")
    p = _pair(padding, "padding")
    out = _empty(_pool_shape(input, k, s, p, (1, 1), ceil_mode), input)
    _check(_lib.thnn_avg_pool2d_forward(out._p, input._p, k, s, p, int(ceil_mode),
                                        int(count_include_pad)))
    return out


def avg_pool2d_backward_input(grad_output, input_shape, kernel_size, stride=None, padding=0,
                              ceil_mode=False, count_include_pad=True):
    k = _pair(kernel_size, "kernel_size")
    s = k if stride is None or stride == [] else _pair(stride, "stride")
    gi = _empty(tuple(input_shape), grad_output)
    _check(_lib.thnn_avg_pool2d_backward_input(gi._p, grad_output._p, k, s,
                                               _pair(padding, "padding"), int(ceil_mode),
                                               int(count_include_pad)))
    return gi


def adaptive_avg_pool2d_forward(input, output_size):
    """output_size: int or (h, w); None in it keeps the input's size."""
    o = _pair(output_size, "output_size") if not isinstance(output_size, (list, tuple)) \
        else list(output_size)
    if len(o) != 2:
        raise ValueError(f"output_size must be an int or a pair, got {output_size!r}")
    shape = tuple(input.shape)
    if input.ndim in (3, 4):
        o = [shape[-2 + i] if v is None else v for i, v in enumerate(o)]
        shape = shape[:-2] + tuple(o)
    out = _empty(shape, input)
    _check(_lib.thnn_adaptive_avg_pool2d_forward(out._p, input._p))
    return out


def adaptive_avg_pool2d_backward_input(grad_output, input_shape):
    gi = _empty(tuple(input_shape), grad_output)
    _check(_lib.thnn_adaptive_avg_pool2d_backward_input(gi._p, grad_output._p))
    return gi


# ---- softmax -----------------------------------------------------------
def softmax_forward(input, dim):
    out = _empty(tuple(input.shape), input)
    _check(_lib.thnn_softmax_forward(out._p, input._p, dim))
    return out


def softmax_backward_input(grad_output, output, dim):
    gi = _empty(tuple(output.shape), output)
    _check(_lib.thnn_softmax_backward_input(gi._p, grad_output._p, output._p, dim))
    return gi


def log_softmax_forward(input, dim):
    out = _empty(tuple(input.shape), input)
    _check(_lib.thnn_log_softmax_forward(out._p, input._p, dim))
    return out


def log_softmax_backward_input(grad_output, output, dim):
    gi = _empty(tuple(output.shape), output)
    _check(_lib.thnn_log_softmax_backward_input(gi._p, grad_output._p, output._p, dim))
    return gi


# ---- losses ------------------------------------------------------------
def _reduction(reduction):
    try:
        return REDUCTIONS[reduction]
    except KeyError:
        raise ValueError(f"{reduction} is not a valid value for reduction") from None


def nll_loss_forward(input, target, weight=None, reduction="mean", ignore_index=-100):
    """(output, total_weight)"""
    r = _reduction(reduction)
    out = _empty(tuple(target.shape) if r == 0 else (), input)
    tw = _empty((), input)
    _check(_lib.thnn_nll_loss_forward(out._p, tw._p, input._p, target._p, _p(weight), r,
                                      ignore_index))
    return out, tw


def nll_loss_backward_input(grad_output, input_shape, target, weight, total_weight,
                            reduction="mean", ignore_index=-100):
    gi = _empty(tuple(input_shape), grad_output)
    _check(_lib.thnn_nll_loss_backward_input(gi._p, grad_output._p, target._p, _p(weight),
                                             total_weight._p, _reduction(reduction),
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


def _pointwise(loss):
    try:
        return POINTWISE_LOSSES[loss]
    except KeyError:
        raise ValueError(f"unknown pointwise loss {loss!r}; one of "
                         f"{sorted(POINTWISE_LOSSES)}") from None


def pointwise_loss_forward(loss, input, target, weight=None, pos_weight=None,
                           reduction="mean", a=1.0):
    """loss: mse, l1, smooth_l1 (a = beta), huber (a = delta), bce,
    bce_with_logits (pos_weight)."""
    r = _reduction(reduction)
    out = _empty(tuple(input.shape) if r == 0 else (), input)
    _check(_lib.thnn_pointwise_loss_forward(out._p, input._p, target._p, _p(weight),
                                            _p(pos_weight), _pointwise(loss), r, a))
    return out


def pointwise_loss_backward_input(loss, grad_output, input, target, weight=None,
                                  pos_weight=None, reduction="mean", a=1.0):
    gi = _empty(tuple(input.shape), input)
    _check(_lib.thnn_pointwise_loss_backward_input(
        gi._p, grad_output._p, input._p, target._p, _p(weight), _p(pos_weight),
        _pointwise(loss), _reduction(reduction), a))
    return gi


# ---- dropout -----------------------------------------------------------------
def dropout_forward(input, p=0.5, generator=None):
    """(output, mask) with mask values 0 or 1/(1-p)."""
    out, mask = _empty(tuple(input.shape), input), _empty(tuple(input.shape), input)
    g = NULL if generator is None else generator._g
    _check(_lib.thnn_dropout_forward(out._p, mask._p, input._p, p, g))
    return out, mask


def dropout_backward_input(grad_output, mask):
    gi = _empty(tuple(mask.shape), mask)
    _check(_lib.thnn_dropout_backward_input(gi._p, grad_output._p, mask._p))
    return gi


# ---- layer norm ----------------------------------------------------------------
def _nshape(normalized_shape):
    return (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)


def layer_norm_forward(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """(output, save_mean, save_invstd)"""
    nd = len(_nshape(normalized_shape))
    if tuple(input.shape[input.ndim - nd:]) != _nshape(normalized_shape) or nd > input.ndim:
        raise RuntimeError(
            f"Given normalized_shape={list(_nshape(normalized_shape))}, expected input with "
            f"shape [*, {', '.join(map(str, _nshape(normalized_shape)))}], but got input of "
            f"size{list(input.shape)}")
    m = 1
    for v in input.shape[:input.ndim - nd]:
        m *= v
    out, sm, si = _empty(tuple(input.shape), input), _empty((m,), input), _empty((m,), input)
    _check(_lib.thnn_layer_norm_forward(out._p, sm._p, si._p, input._p, _p(weight), _p(bias),
                                        nd, eps))
    return out, sm, si


def layer_norm_backward_input(grad_output, input, normalized_shape, weight, save_mean,
                              save_invstd):
    gi = _empty(tuple(input.shape), input)
    _check(_lib.thnn_layer_norm_backward_input(gi._p, grad_output._p, input._p, _p(weight),
                                               save_mean._p, save_invstd._p,
                                               len(_nshape(normalized_shape))))
    return gi


def layer_norm_backward_params(grad_output, input, normalized_shape, save_mean, save_invstd,
                               need_weight=True, need_bias=True):
    shape = _nshape(normalized_shape)
    gw = _empty(shape, input) if need_weight else None
    gb = _empty(shape, input) if need_bias else None
    _check(_lib.thnn_layer_norm_backward_params(_p(gw), _p(gb), grad_output._p, input._p,
                                                save_mean._p, save_invstd._p, len(shape)))
    return gw, gb


# ---- embedding -------------------------------------------------------------------
def embedding_forward(weight, indices):
    shape = tuple(indices.shape) + (weight.shape[1] if weight.ndim == 2 else 0,)
    out = _empty(shape, weight)
    _check(_lib.thnn_embedding_forward(out._p, weight._p, indices._p))
    return out


def embedding_backward_params(grad_output, indices, num_weights, padding_idx=None):
    """padding_idx as in PyTorch: None, or a row (negative counts from the end)."""
    if padding_idx is None:
        padding_idx = -1
    elif padding_idx < 0:
        padding_idx += num_weights
    gw = _empty((num_weights, grad_output.shape[-1]), grad_output)
    _check(_lib.thnn_embedding_backward_params(gw._p, grad_output._p, indices._p, padding_idx))
    return gw


# ---- batch norm ----------------------------------------------------------
def batch_norm_forward(input, weight=None, bias=None, running_mean=None, running_var=None,
                       training=True, momentum=0.1, eps=1e-5):
    """(output, save_mean, save_invstd); running stats updated in place."""
    c = input.shape[1] if input.ndim >= 2 else 0
    out, m, s = _empty(tuple(input.shape), input), _empty((c,), input), _empty((c,), input)
    _check(_lib.thnn_batch_norm_forward(out._p, m._p, s._p, _p(running_mean), _p(running_var),
                                        input._p, _p(weight), _p(bias), int(training),
                                        momentum, eps))
    return out, m, s


def batch_norm_backward_input(grad_output, input, weight, save_mean, save_invstd,
                              training=True):
    gi = _empty(tuple(input.shape), input)
    _check(_lib.thnn_batch_norm_backward_input(gi._p, grad_output._p, input._p, _p(weight),
                                               _p(save_mean), _p(save_invstd), int(training)))
    return gi


def batch_norm_backward_params(grad_output, input, save_mean, save_invstd,
                               need_weight=True, need_bias=True):
    c = input.shape[1]
    gw = _empty((c,), input) if need_weight else None
    gb = _empty((c,), input) if need_bias else None
    _check(_lib.thnn_batch_norm_backward_params(_p(gw), _p(gb), grad_output._p, input._p,
                                                _p(save_mean), _p(save_invstd)))
    return gw, gb


# ---- activations ----------------------------------------------------------
def activation_forward(name, input, a=0.0, b=0.0):
    out = _empty(tuple(input.shape), input)
    _check(_lib.thnn_activation_forward(out._p, input._p, ACTIVATIONS[name], a, b))
    return out


def activation_backward_input(name, grad_output, input, a=0.0, b=0.0):
    gi = _empty(tuple(input.shape), input)
    _check(_lib.thnn_activation_backward_input(gi._p, grad_output._p, input._p,
                                               ACTIVATIONS[name], a, b))
    return gi


class _Kernels:
    """The ``ember.kernels`` entry point: this module's functions by name
    (ember.nn's kernel table in ember/nn/_kernel_specs.py runs them)."""
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
