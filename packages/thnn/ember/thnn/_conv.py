"""Bindings of the convolutions: conv2d, conv1d, conv3d, conv_transpose2d."""
from ._library import ntuple, pair

NAMES = ["conv2d_forward", "conv2d_backward_input", "conv2d_backward_params",
         "conv1d_forward", "conv1d_backward_input", "conv1d_backward_params",
         "conv3d_forward", "conv3d_backward_input", "conv3d_backward_params",
         "conv_transpose2d_forward", "conv_transpose2d_backward_input",
         "conv_transpose2d_backward_params"]


def _single(v, name):
    if isinstance(v, int):
        return v
    v = list(v)
    if len(v) != 1 or not isinstance(v[0], int):
        raise ValueError(f"{name} must be an int or a 1-tuple of ints, got {v!r}")
    return v[0]


def _convt_args(stride, padding, output_padding, dilation):
    return (ntuple(stride, 2, "stride"), ntuple(padding, 2, "padding"),
            ntuple(output_padding, 2, "output_padding"), ntuple(dilation, 2, "dilation"))


def _transposed_size(n, k, s, p, op, d):
    """(n - 1) * s - 2p + d (k - 1) + op + 1; 0 when invalid or beyond int64
    (an empty output, and the kernel says why)."""
    v = (n - 1) * s - 2 * p + d * (k - 1) + op + 1
    return v if 0 <= v < 2 ** 63 else 0


def define(L):
    """This family's functions on kernel library L (see _library)."""
    C, check, ptr, empty, window = L.C, L.check, L.ptr, L.empty, L.window

    def _params_out(weight_shape, input, need_weight, need_bias, bias_size):
        gw = empty(weight_shape, input) if need_weight else None
        gb = empty((bias_size,), input) if need_bias else None
        return gw, gb

    def conv2d_forward(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
        s, p, d = pair(stride, "stride"), pair(padding, "padding"), pair(dilation, "dilation")
        if input.ndim == 4 and weight.ndim == 4:
            shape = (input.shape[0], weight.shape[0],
                     window(input.shape[2], weight.shape[2], s[0], p[0], d[0]),
                     window(input.shape[3], weight.shape[3], s[1], p[1], d[1]))
        else:
            shape = (0,)
        out = empty(shape, input)
        check(C.conv2d_forward(ptr(out), ptr(input), ptr(weight), ptr(bias), s, p, d, groups))
        return out

    def conv2d_backward_input(grad_output, input_shape, weight, stride=1, padding=0,
                              dilation=1, groups=1):
        gi = empty(input_shape, grad_output)
        check(C.conv2d_backward_input(ptr(gi), ptr(grad_output), ptr(weight),
                                      pair(stride, "stride"), pair(padding, "padding"),
                                      pair(dilation, "dilation"), groups))
        return gi

    def conv2d_backward_params(grad_output, input, weight_shape, stride=1, padding=0,
                               dilation=1, groups=1, need_weight=True, need_bias=True):
        """(grad_weight, grad_bias); either is None when not asked for."""
        gw, gb = _params_out(weight_shape, input, need_weight, need_bias, weight_shape[0])
        check(C.conv2d_backward_params(ptr(gw), ptr(gb), ptr(grad_output), ptr(input),
                                       pair(stride, "stride"), pair(padding, "padding"),
                                       pair(dilation, "dilation"), groups))
        return gw, gb

    def conv1d_forward(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
        s, p = _single(stride, "stride"), _single(padding, "padding")
        d = _single(dilation, "dilation")
        if input.ndim == 3 and weight.ndim == 3:
            shape = (input.shape[0], weight.shape[0],
                     window(input.shape[2], weight.shape[2], s, p, d))
        else:
            shape = (0, 0, 0)
        out = empty(shape, input)
        check(C.conv1d_forward(ptr(out), ptr(input), ptr(weight), ptr(bias), s, p, d, groups))
        return out

    def conv1d_backward_input(grad_output, input_shape, weight, stride=1, padding=0,
                              dilation=1, groups=1):
        gi = empty(input_shape, grad_output)
        check(C.conv1d_backward_input(ptr(gi), ptr(grad_output), ptr(weight),
                                      _single(stride, "stride"), _single(padding, "padding"),
                                      _single(dilation, "dilation"), groups))
        return gi

    def conv1d_backward_params(grad_output, input, weight_shape, stride=1, padding=0,
                               dilation=1, groups=1, need_weight=True, need_bias=True):
        """(grad_weight, grad_bias); either is None when not asked for."""
        gw, gb = _params_out(weight_shape, input, need_weight, need_bias, weight_shape[0])
        check(C.conv1d_backward_params(ptr(gw), ptr(gb), ptr(grad_output), ptr(input),
                                       _single(stride, "stride"), _single(padding, "padding"),
                                       _single(dilation, "dilation"), groups))
        return gw, gb

    def conv3d_forward(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
        s, p = ntuple(stride, 3, "stride"), ntuple(padding, 3, "padding")
        d = ntuple(dilation, 3, "dilation")
        if input.ndim == 5 and weight.ndim == 5:
            shape = (input.shape[0], weight.shape[0]) + tuple(
                window(input.shape[2 + i], weight.shape[2 + i], s[i], p[i], d[i])
                for i in range(3))
        else:
            shape = (0,)
        out = empty(shape, input)
        check(C.conv3d_forward(ptr(out), ptr(input), ptr(weight), ptr(bias), s, p, d, groups))
        return out

    def conv3d_backward_input(grad_output, input_shape, weight, stride=1, padding=0,
                              dilation=1, groups=1):
        gi = empty(input_shape, grad_output)
        check(C.conv3d_backward_input(ptr(gi), ptr(grad_output), ptr(weight),
                                      ntuple(stride, 3, "stride"), ntuple(padding, 3, "padding"),
                                      ntuple(dilation, 3, "dilation"), groups))
        return gi

    def conv3d_backward_params(grad_output, input, weight_shape, stride=1, padding=0,
                               dilation=1, groups=1, need_weight=True, need_bias=True):
        """(grad_weight, grad_bias); either is None when not asked for."""
        gw, gb = _params_out(weight_shape, input, need_weight, need_bias, weight_shape[0])
        check(C.conv3d_backward_params(ptr(gw), ptr(gb), ptr(grad_output), ptr(input),
                                       ntuple(stride, 3, "stride"),
                                       ntuple(padding, 3, "padding"),
                                       ntuple(dilation, 3, "dilation"), groups))
        return gw, gb

    def conv_transpose2d_forward(input, weight, bias=None, stride=1, padding=0,
                                 output_padding=0, dilation=1, groups=1):
        """Output (N, weight.shape[1] * groups, OH, OW) with OH = (H - 1) * stride
        - 2 * padding + dilation * (kH - 1) + output_padding + 1."""
        s, p, op, d = _convt_args(stride, padding, output_padding, dilation)
        if input.ndim == 4 and weight.ndim == 4:
            shape = (input.shape[0], weight.shape[1] * groups) + tuple(
                _transposed_size(input.shape[2 + i], weight.shape[2 + i], s[i], p[i], op[i],
                                 d[i]) for i in range(2))
        else:
            shape = (0,)
        out = empty(shape, input)
        check(C.conv_transpose2d_forward(ptr(out), ptr(input), ptr(weight), ptr(bias),
                                         s, p, op, d, groups))
        return out

    def conv_transpose2d_backward_input(grad_output, input_shape, weight, stride=1, padding=0,
                                        output_padding=0, dilation=1, groups=1):
        s, p, op, d = _convt_args(stride, padding, output_padding, dilation)
        gi = empty(input_shape, grad_output)
        check(C.conv_transpose2d_backward_input(ptr(gi), ptr(grad_output), ptr(weight),
                                                s, p, op, d, groups))
        return gi

    def conv_transpose2d_backward_params(grad_output, input, weight_shape, stride=1,
                                         padding=0, output_padding=0, dilation=1, groups=1,
                                         need_weight=True, need_bias=True):
        """(grad_weight, grad_bias); grad_bias has weight_shape[1] * groups entries."""
        s, p, op, d = _convt_args(stride, padding, output_padding, dilation)
        gw, gb = _params_out(weight_shape, input, need_weight, need_bias,
                             weight_shape[1] * groups)
        check(C.conv_transpose2d_backward_params(ptr(gw), ptr(gb), ptr(grad_output),
                                                 ptr(input), s, p, op, d, groups))
        return gw, gb

    return {n: v for n, v in locals().items() if n in NAMES}
