"""Bindings of the poolings: max/avg 2-d and 3-d, adaptive average and max,
and the 1-d poolings, which run the 2-d kernels on (N, C, 1, L) views."""
import ember.th as _th

from ._lib import check as _check, lib as _lib
from ._args import _empty, _ntuple, _pair, _stride, _window, _window_or_zero

__all__ = ["max_pool2d_forward", "max_pool2d_backward_input", "avg_pool2d_forward",
           "avg_pool2d_backward_input", "adaptive_avg_pool2d_forward",
           "adaptive_avg_pool2d_backward_input", "max_pool3d_forward",
           "max_pool3d_backward_input", "avg_pool3d_forward", "avg_pool3d_backward_input",
           "adaptive_max_pool2d_forward", "adaptive_max_pool2d_backward_input",
           "max_pool1d_forward", "max_pool1d_backward_input", "avg_pool1d_forward",
           "avg_pool1d_backward_input", "adaptive_max_pool1d_forward",
           "adaptive_max_pool1d_backward_input", "adaptive_avg_pool1d_forward",
           "adaptive_avg_pool1d_backward_input"]


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


def _divisor(divisor_override):
    if divisor_override is None:
        return 0
    if int(divisor_override) == 0:
        raise RuntimeError("divisor must be not zero")
    return int(divisor_override)


def _pool3d_shape(input, k, s, p, d, ceil_mode):
    if input.ndim not in (4, 5):
        return (0,)
    return tuple(input.shape[:-3]) + tuple(
        _window_or_zero(input.shape[-3 + i], k[i], s[i], p[i], d[i], ceil_mode) for i in range(3))


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
    shape = tuple(x.shape[:-1]) + (_window_or_zero(x.shape[-1], k, s, _single(padding, "padding"),
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
    shape = tuple(x.shape[:-1]) + (_window_or_zero(x.shape[-1], k, s, p, 1, ceil_mode),)
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
