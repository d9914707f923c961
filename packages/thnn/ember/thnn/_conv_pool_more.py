"""Bindings of conv3d, conv_transpose2d, 3-d pooling and adaptive max
pooling, and the 1-d poolings, which run the 2-d kernels on (N, C, 1, L)
views.  Same conventions as the other ember.thnn functions: ember.th
tensors in and out, outputs allocated here, C errors raised with their
exception type."""
import ember.th as _th

from ._lib import check as _check, ffi as _ffi, lib as _lib

__all__ = [
    "conv3d_forward", "conv3d_backward_input", "conv3d_backward_params",
    "conv_transpose2d_forward", "conv_transpose2d_backward_input",
    "conv_transpose2d_backward_params",
    "max_pool3d_forward", "max_pool3d_backward_input",
    "avg_pool3d_forward", "avg_pool3d_backward_input",
    "adaptive_max_pool2d_forward", "adaptive_max_pool2d_backward_input",
    "max_pool1d_forward", "max_pool1d_backward_input",
    "avg_pool1d_forward", "avg_pool1d_backward_input",
    "adaptive_max_pool1d_forward", "adaptive_max_pool1d_backward_input",
    "adaptive_avg_pool1d_forward", "adaptive_avg_pool1d_backward_input",
]


def _p(t):
    return _ffi.NULL if t is None else t._p


def _ntuple(v, n, name):
    """int or sequence of n ints -> list of n ints (a 1-sequence repeats)."""
    if isinstance(v, int) and not isinstance(v, bool):
        return [v] * n
    try:
        v = list(v)
    except TypeError:
        raise TypeError(f"{name} must be an int or a sequence of {n} ints, got {v!r}") from None
    if len(v) == 1:
        v = v * n
    if len(v) != n or not all(isinstance(i, int) and not isinstance(i, bool) for i in v):
        raise ValueError(f"{name} must be an int or a sequence of {n} ints, got {v!r}")
    return v


def _stride(stride, kernel, n):
    return list(kernel) if stride is None or stride == [] or stride == () \
        else _ntuple(stride, n, "stride")


def _empty(shape, like, dtype=None):
    return _th.empty(*shape, dtype=dtype or like.dtype) if shape else \
        _th.empty((), dtype=dtype or like.dtype)


def _window(n, k, s, p, d, ceil_mode):
    """Output length of a window along one dim; 0 when invalid (the kernel
    then reports the error in its words)."""
    return max(_lib.thnn_window_output_size(n, k, s, p, d, int(ceil_mode)), 0)


def _divisor(divisor_override):
    if divisor_override is None:
        return 0
    if int(divisor_override) == 0:
        raise RuntimeError("divisor must be not zero")
    return int(divisor_override)


# ---- conv3d ------------------------------------------------------------
def conv3d_forward(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    s, p, d = (_ntuple(stride, 3, "stride"), _ntuple(padding, 3, "padding"),
               _ntuple(dilation, 3, "dilation"))
    if input.ndim == 5 and weight.ndim == 5:
        shape = (input.shape[0], weight.shape[0]) + tuple(
            _window(input.shape[2 + i], weight.shape[2 + i], s[i], p[i], d[i], False)
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


# ---- conv_transpose2d --------------------------------------------------
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


# ---- 3-d pooling -------------------------------------------------------
def _pool3d_shape(input, k, s, p, d, ceil_mode):
    if input.ndim not in (4, 5):
        return (0,)
    return tuple(input.shape[:-3]) + tuple(
        _window(input.shape[-3 + i], k[i], s[i], p[i], d[i], ceil_mode) for i in range(3))


def max_pool3d_forward(input, kernel_size, stride=None, padding=0, dilation=1,
                       ceil_mode=False):
    """(output, indices); indices are flat positions in each D*H*W volume."""
    k = _ntuple(kernel_size, 3, "kernel_size")
    s, p, d = _stride(stride, k, 3), _ntuple(padding, 3, "padding"), _ntuple(dilation, 3, "dilation")
    shape = _pool3d_shape(input, k, s, p, d, ceil_mode)
    out, ind = _empty(shape, input), _empty(shape, input, _th.int64)
    _check(_lib.thnn_max_pool3d_forward(out._p, ind._p, input._p, k, s, p, d, int(ceil_mode)))
    return out, ind


def max_pool3d_backward_input(grad_output, input_shape, indices):
    gi = _empty(tuple(input_shape), grad_output)
    _check(_lib.thnn_max_pool3d_backward_input(gi._p, grad_output._p, indices._p))
    return gi


def avg_pool3d_forward(input, kernel_size, stride=None, padding=0, ceil_mode=False,
                       count_include_pad=True, divisor_override=None):
    k = _ntuple(kernel_size, 3, "kernel_size")
    s, p = _stride(stride, k, 3), _ntuple(padding, 3, "padding")
    out = _empty(_pool3d_shape(input, k, s, p, (1, 1, 1), ceil_mode), input)
    _check(_lib.thnn_avg_pool3d_forward(out._p, input._p, k, s, p, int(ceil_mode),
                                        int(count_include_pad), _divisor(divisor_override)))
    return out


def avg_pool3d_backward_input(grad_output, input_shape, kernel_size, stride=None, padding=0,
                              ceil_mode=False, count_include_pad=True, divisor_override=None):
    k = _ntuple(kernel_size, 3, "kernel_size")
    gi = _empty(tuple(input_shape), grad_output)
    _check(_lib.thnn_avg_pool3d_backward_input(
        gi._p, grad_output._p, k, _stride(stride, k, 3), _ntuple(padding, 3, "padding"),
        int(ceil_mode), int(count_include_pad), _divisor(divisor_override)))
    return gi


# ---- adaptive max pooling ------------------------------------------------
def _adaptive_shape(input, output_size):
    """input's leading dims + output_size (None entries keep the input's size)."""
    o = [output_size] * 2 if isinstance(output_size, int) or output_size is None \
        else list(output_size)
    if len(o) == 1:
        o = o * 2
    if len(o) != 2:
        raise ValueError(f"output_size must be an int or a pair, got {output_size!r}")
    shape = tuple(input.shape)
    if input.ndim in (3, 4):
        shape = shape[:-2] + tuple(shape[-2 + i] if v is None else v for i, v in enumerate(o))
    return shape


def adaptive_max_pool2d_forward(input, output_size):
    """(output, indices); indices are flat positions in each H*W plane."""
    shape = _adaptive_shape(input, output_size)
    if any(v < 0 for v in shape):
        raise RuntimeError(f"adaptive_max_pool2d: output_size must be positive, "
                           f"got {output_size!r}")
    out, ind = _empty(shape, input), _empty(shape, input, _th.int64)
    _check(_lib.thnn_adaptive_max_pool2d_forward(out._p, ind._p, input._p))
    return out, ind


def adaptive_max_pool2d_backward_input(grad_output, input_shape, indices):
    gi = _empty(tuple(input_shape), grad_output)
    _check(_lib.thnn_adaptive_max_pool2d_backward_input(gi._p, grad_output._p, indices._p))
    return gi


# ---- 1-d pooling: the 2-d kernels on (N, C, 1, L) views -------------------
def _as_2d(t, fn, name="input"):
    if t.ndim not in (2, 3):
        raise RuntimeError(f"{fn}: Expected 2D or 3D (batch mode) tensor for {name}, "
                           f"but got: {list(t.shape)}")
    return t.unsqueeze(-2)


def _shape_2d(shape):
    shape = tuple(shape)
    return shape[:-1] + (1,) + shape[-1:]


def _single(v, name):
    return _ntuple(v, 1, name)[0]


def max_pool1d_forward(input, kernel_size, stride=None, padding=0, dilation=1,
                       ceil_mode=False):
    """(output, indices) for input (N, C, L) or (C, L); indices are positions in L."""
    k = _single(kernel_size, "kernel_size")
    s = k if stride is None or stride == [] or stride == () else _single(stride, "stride")
    x = _as_2d(input, "max_pool1d")
    shape = tuple(x.shape[:-1]) + (_window(x.shape[-1], k, s, _single(padding, "padding"),
                                           _single(dilation, "dilation"), ceil_mode),)
    out, ind = _empty(shape, input), _empty(shape, input, _th.int64)
    _check(_lib.thnn_max_pool2d_forward(out._p, ind._p, x._p, [1, k], [1, s],
                                        [0, _single(padding, "padding")],
                                        [1, _single(dilation, "dilation")], int(ceil_mode)))
    return out.squeeze(-2), ind.squeeze(-2)


def max_pool1d_backward_input(grad_output, input_shape, indices):
    go = _as_2d(grad_output, "max_pool1d_backward_input", "grad_output")
    ind = _as_2d(indices, "max_pool1d_backward_input", "indices")
    gi = _empty(_shape_2d(input_shape), grad_output)
    _check(_lib.thnn_max_pool2d_backward_input(gi._p, go._p, ind._p))
    return gi.view(*input_shape)


def avg_pool1d_forward(input, kernel_size, stride=None, padding=0, ceil_mode=False,
                       count_include_pad=True):
    k = _single(kernel_size, "kernel_size")
    s = k if stride is None or stride == [] or stride == () else _single(stride, "stride")
    p = _single(padding, "padding")
    x = _as_2d(input, "avg_pool1d")
    shape = tuple(x.shape[:-1]) + (_window(x.shape[-1], k, s, p, 1, ceil_mode),)
    out = _empty(shape, input)
    _check(_lib.thnn_avg_pool2d_forward(out._p, x._p, [1, k], [1, s], [0, p],
                                        int(ceil_mode), int(count_include_pad)))
    return out.squeeze(-2)


def avg_pool1d_backward_input(grad_output, input_shape, kernel_size, stride=None, padding=0,
                              ceil_mode=False, count_include_pad=True):
    k = _single(kernel_size, "kernel_size")
    s = k if stride is None or stride == [] or stride == () else _single(stride, "stride")
    go = _as_2d(grad_output, "avg_pool1d_backward_input", "grad_output")
    gi = _empty(_shape_2d(input_shape), grad_output)
    _check(_lib.thnn_avg_pool2d_backward_input(gi._p, go._p, [1, k], [1, s],
                                               [0, _single(padding, "padding")],
                                               int(ceil_mode), int(count_include_pad)))
    return gi.view(*input_shape)


def adaptive_max_pool1d_forward(input, output_size):
    """(output, indices) for input (N, C, L) or (C, L); indices are positions in L."""
    x = _as_2d(input, "adaptive_max_pool1d")
    o = _single(output_size, "output_size")
    shape = tuple(x.shape[:-1]) + (o,)
    if o < 0:
        raise RuntimeError(f"adaptive_max_pool1d: output_size must be positive, got {o}")
    out, ind = _empty(shape, input), _empty(shape, input, _th.int64)
    _check(_lib.thnn_adaptive_max_pool2d_forward(out._p, ind._p, x._p))
    return out.squeeze(-2), ind.squeeze(-2)


def adaptive_max_pool1d_backward_input(grad_output, input_shape, indices):
    go = _as_2d(grad_output, "adaptive_max_pool1d_backward_input", "grad_output")
    ind = _as_2d(indices, "adaptive_max_pool1d_backward_input", "indices")
    gi = _empty(_shape_2d(input_shape), grad_output)
    _check(_lib.thnn_adaptive_max_pool2d_backward_input(gi._p, go._p, ind._p))
    return gi.view(*input_shape)


def adaptive_avg_pool1d_forward(input, output_size):
    x = _as_2d(input, "adaptive_avg_pool1d")
    o = _single(output_size, "output_size")
    if o < 0:
        raise RuntimeError(f"adaptive_avg_pool1d: output_size must be positive, got {o}")
    out = _empty(tuple(x.shape[:-1]) + (o,), input)
    _check(_lib.thnn_adaptive_avg_pool2d_forward(out._p, x._p))
    return out.squeeze(-2)


def adaptive_avg_pool1d_backward_input(grad_output, input_shape):
    go = _as_2d(grad_output, "adaptive_avg_pool1d_backward_input", "grad_output")
    gi = _empty(_shape_2d(input_shape), grad_output)
    _check(_lib.thnn_adaptive_avg_pool2d_backward_input(gi._p, go._p))
    return gi.view(*input_shape)
