"""Bindings of the normalisations: batch_norm, layer_norm, group_norm."""
from ._lib import check as _check, lib as _lib
from ._args import _empty, _p

__all__ = ["layer_norm_forward", "layer_norm_backward_input", "layer_norm_backward_params",
           "batch_norm_forward", "batch_norm_backward_input", "batch_norm_backward_params",
           "group_norm_forward", "group_norm_backward_input", "group_norm_backward_params"]


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


def _stats_shape(input, num_groups):
    return (input.shape[0] if input.ndim else 0, num_groups)


def group_norm_forward(input, num_groups, weight=None, bias=None, eps=1e-5):
    """(output, save_mean, save_rstd); the statistics are (N, num_groups)."""
    out = _empty(tuple(input.shape), input)
    sm = _empty(_stats_shape(input, max(num_groups, 0)), input)
    sr = _empty(_stats_shape(input, max(num_groups, 0)), input)
    _check(_lib.thnn_group_norm_forward(out._p, sm._p, sr._p, input._p, _p(weight),
                                        _p(bias), num_groups, eps))
    return out, sm, sr


def group_norm_backward_input(grad_output, input, num_groups, weight, save_mean, save_rstd):
    gi = _empty(tuple(input.shape), input)
    _check(_lib.thnn_group_norm_backward_input(gi._p, grad_output._p, input._p, _p(weight),
                                               _p(save_mean), _p(save_rstd), num_groups))
    return gi


def group_norm_backward_params(grad_output, input, num_groups, save_mean, save_rstd,
                               need_weight=True, need_bias=True):
    """(grad_weight, grad_bias); either is None when not asked for."""
    c = (input.shape[1],) if input.ndim >= 2 else (0,)
    gw = _empty(c, input) if need_weight else None
    gb = _empty(c, input) if need_bias else None
    _check(_lib.thnn_group_norm_backward_params(_p(gw), _p(gb), grad_output._p, input._p,
                                                _p(save_mean), _p(save_rstd), num_groups))
    return gw, gb
