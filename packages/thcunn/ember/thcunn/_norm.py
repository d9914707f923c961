"""Bindings of layer_norm, group_norm and dropout (src/norm.cu,
src/dropout.cu), with ember.thnn's names, arguments and return values.

ember.thc tensors in and out, outputs allocated here, the C status raised
with its message."""
import ember.thc as _thc

from ._args import NULL, _empty, _p
from ._lib import check as _check, lib as _lib

__all__ = [
    "layer_norm_forward", "layer_norm_backward_input", "layer_norm_backward_params",
    "group_norm_forward", "group_norm_backward_input", "group_norm_backward_params",
    "dropout_forward", "dropout_backward_input",
]

# ---- layer norm ------------------------------------------------------------
def _nshape(normalized_shape):
    return (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)


def layer_norm_forward(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """(output, save_mean, save_invstd)"""
    shape = _nshape(normalized_shape)
    nd = len(shape)
    if nd > input.ndim or tuple(input.shape[input.ndim - nd:]) != shape:
        raise RuntimeError(
            f"Given normalized_shape={list(shape)}, expected input with shape "
            f"[*, {', '.join(map(str, shape))}], but got input of size{list(input.shape)}")
    m = 1
    for v in input.shape[:input.ndim - nd]:
        m *= v
    out, sm, si = _empty(input.shape, input), _empty((m,), input), _empty((m,), input)
    _check(_lib.thcunn_layer_norm_forward(_p(out), _p(sm), _p(si), _p(input), _p(weight),
                                          _p(bias), nd, eps))
    return out, sm, si


def layer_norm_backward_input(grad_output, input, normalized_shape, weight, save_mean,
                              save_invstd):
    gi = _empty(input.shape, input)
    _check(_lib.thcunn_layer_norm_backward_input(_p(gi), _p(grad_output), _p(input), _p(weight),
                                                 _p(save_mean), _p(save_invstd),
                                                 len(_nshape(normalized_shape))))
    return gi


def layer_norm_backward_params(grad_output, input, normalized_shape, save_mean, save_invstd,
                               need_weight=True, need_bias=True):
    """(grad_weight, grad_bias); either is None when not asked for."""
    shape = _nshape(normalized_shape)
    gw = _empty(shape, input) if need_weight else None
    gb = _empty(shape, input) if need_bias else None
    _check(_lib.thcunn_layer_norm_backward_params(_p(gw), _p(gb), _p(grad_output), _p(input),
                                                  _p(save_mean), _p(save_invstd), len(shape)))
    return gw, gb


# ---- group norm ------------------------------------------------------------
def _stats_shape(input, num_groups):
    return (input.shape[0] if input.ndim else 0, max(num_groups, 0))


def group_norm_forward(input, num_groups, weight=None, bias=None, eps=1e-5):
    """(output, save_mean, save_rstd); the statistics are (N, num_groups)."""
    out = _empty(input.shape, input)
    sm, sr = _empty(_stats_shape(input, num_groups), input), \
        _empty(_stats_shape(input, num_groups), input)
    _check(_lib.thcunn_group_norm_forward(_p(out), _p(sm), _p(sr), _p(input), _p(weight),
                                          _p(bias), num_groups, eps))
    return out, sm, sr


def group_norm_backward_input(grad_output, input, num_groups, weight, save_mean, save_rstd):
    gi = _empty(input.shape, input)
    _check(_lib.thcunn_group_norm_backward_input(_p(gi), _p(grad_output), _p(input), _p(weight),
                                                 _p(save_mean), _p(save_rstd), num_groups))
    return gi


def group_norm_backward_params(grad_output, input, num_groups, save_mean, save_rstd,
                               need_weight=True, need_bias=True):
    """(grad_weight, grad_bias); either is None when not asked for."""
    c = (input.shape[1],) if input.ndim >= 2 else (0,)
    gw = _empty(c, input) if need_weight else None
    gb = _empty(c, input) if need_bias else None
    _check(_lib.thcunn_group_norm_backward_params(_p(gw), _p(gb), _p(grad_output), _p(input),
                                                  _p(save_mean), _p(save_rstd), num_groups))
    return gw, gb


# ---- dropout ---------------------------------------------------------------
def dropout_forward(input, p=0.5, generator=None):
    """(output, mask) with mask values 0 or 1/(1-p), drawn from the
    ember.thc Generator given (libTHC's default one for None)."""
    if generator is None:
        g = NULL
    elif isinstance(generator, _thc.Generator):
        g = generator._g
    else:
        raise TypeError(f"dropout_forward: generator must be an ember.thc Generator (a CUDA "
                        f"generator), got {type(generator).__module__}."
                        f"{type(generator).__name__}")
    out, mask = _empty(input.shape, input), _empty(input.shape, input)
    _check(_lib.thcunn_dropout_forward(_p(out), _p(mask), _p(input), p, g))
    return out, mask


def dropout_backward_input(grad_output, mask):
    gi = _empty(mask.shape, mask)
    _check(_lib.thcunn_dropout_backward_input(_p(gi), _p(grad_output), _p(mask)))
    return gi
