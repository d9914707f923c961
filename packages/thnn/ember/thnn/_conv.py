"""Bindings of the convolutions: conv2d, conv1d, conv3d, conv_transpose2d."""
from ._lib import check as _check, lib as _lib
from ._args import _empty, _ntuple, _p, _pair, _window_or_zero

__all__ = ["conv2d_forward", "conv2d_backward_input", "conv2d_backward_params",
           "conv1d_forward", "conv1d_backward_input", "conv1d_backward_params",
           "conv3d_forward", "conv3d_backward_input", "conv3d_backward_params",
           "conv_transpose2d_forward", "conv_transpose2d_backward_input",
           "conv_transpose2d_backward_params"]


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


def conv3d_forward(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    s, p, d = (_ntuple(stride, 3, "stride"), _ntuple(padding, 3, "padding"),
               _ntuple(dilation, 3, "dilation"))
    if input.ndim == 5 and weight.ndim == 5:
        shape = (input.shape[0], weight.shape[0]) + tuple(
            _window_or_zero(input.shape[2 + i], weight.shape[2 + i], s[i], p[i], d[i], False)
            for i in range(3))
    else:
        shape = (0,)
    out = _empty(shape, input)
    _check(_lib.thnn_conv3d_forward(out._p, input._p, weight._p, _p(bias), s, p, d, groups))
    return out


def conv3d_backward_input(grad_output, input_shape, weight, stride=1, padding=0,
                          dilation=1, groups=1):
    gi = _empty(tuple(input_shape), grad_output)
    _check(_lib.thnn_conv3d_backward_input(
        gi._p, grad_output._p, weight._p, _ntuple(stride, 3, "stride"),
        _ntuple(padding, 3, "padding"), _ntuple(dilation, 3, "dilation"), groups))
    return gi


def conv3d_backward_params(grad_output, input, weight_shape, stride=1, padding=0,
                           dilation=1, groups=1, need_weight=True, need_bias=True):
    """(grad_weight, grad_bias); either is None when not asked for."""
    gw = _empty(tuple(weight_shape), input) if need_weight else None
    gb = _empty((weight_shape[0],), input) if need_bias else None
    _check(_lib.thnn_conv3d_backward_params(
        _p(gw), _p(gb), grad_output._p, input._p, _ntuple(stride, 3, "stride"),
        _ntuple(padding, 3, "padding"), _ntuple(dilation, 3, "dilation"), groups))
    return gw, gb


def _convt_args(stride, padding, output_padding, dilation):
    return (_ntuple(stride, 2, "stride"), _ntuple(padding, 2, "padding"),
            _ntuple(output_padding, 2, "output_padding"), _ntuple(dilation, 2, "dilation"))


def conv_transpose2d_forward(input, weight, bias=None, stride=1, padding=0,
                             output_padding=0, dilation=1, groups=1):
    """Output (N, weight.shape[1] * groups, OH, OW) with OH = (H - 1) * stride
    - 2 * padding + dilation * (kH - 1) + output_padding + 1."""
    s, p, op, d = _convt_args(stride, padding, output_padding, dilation)
    if input.ndim == 4 and weight.ndim == 4:
        shape = (input.shape[0], weight.shape[1] * groups) + tuple(
            max((input.shape[2 + i] - 1) * s[i] - 2 * p[i] + d[i] * (weight.shape[2 + i] - 1)
                + op[i] + 1, 0) for i in range(2))
    else:
        shape = (0,)
    out = _empty(shape, input)
    _check(_lib.thnn_conv_transpose2d_forward(out._p, input._p, weight._p, _p(bias),
                                              s, p, op, d, groups))
    return out


def conv_transpose2d_backward_input(grad_output, input_shape, weight, stride=1, padding=0,
                                    output_padding=0, dilation=1, groups=1):
    s, p, op, d = _convt_args(stride, padding, output_padding, dilation)
    gi = _empty(tuple(input_shape), grad_output)
    _check(_lib.thnn_conv_transpose2d_backward_input(gi._p, grad_output._p, weight._p,
                                                     s, p, op, d, groups))
    return gi


def conv_transpose2d_backward_params(grad_output, input, weight_shape, stride=1, padding=0,
                                     output_padding=0, dilation=1, groups=1,
                                     need_weight=True, need_bias=True):
    """(grad_weight, grad_bias); grad_bias has weight_shape[1] * groups entries."""
    s, p, op, d = _convt_args(stride, padding, output_padding, dilation)
    gw = _empty(tuple(weight_shape), input) if need_weight else None
    gb = _empty((weight_shape[1] * groups,), input) if need_bias else None
    _check(_lib.thnn_conv_transpose2d_backward_params(
        _p(gw), _p(gb), grad_output._p, input._p, s, p, op, d, groups))
    return gw, gb
