"""Bindings of the poolings: max/avg 2-d and 3-d, adaptive average and max,
and the 1-d poolings, which run the 2-d kernels on (N, C, 1, L) views."""
from ._library import ntuple, pair, single, window_stride

NAMES = ["max_pool2d_forward", "max_pool2d_backward_input", "avg_pool2d_forward",
         "avg_pool2d_backward_input", "adaptive_avg_pool2d_forward",
         "adaptive_avg_pool2d_backward_input", "max_pool3d_forward",
         "max_pool3d_backward_input", "avg_pool3d_forward", "avg_pool3d_backward_input",
         "adaptive_max_pool2d_forward", "adaptive_max_pool2d_backward_input",
         "max_pool1d_forward", "max_pool1d_backward_input", "avg_pool1d_forward",
         "avg_pool1d_backward_input", "adaptive_max_pool1d_forward",
         "adaptive_max_pool1d_backward_input", "adaptive_avg_pool1d_forward",
         "adaptive_avg_pool1d_backward_input"]


def _stride2(stride, k):
    return k if stride is None or stride == [] else pair(stride, "stride")


def _divisor(divisor_override):
    if divisor_override is None:
        return 0
    if int(divisor_override) == 0:
        raise RuntimeError("divisor must be not zero")
    return int(divisor_override)


def _output_pair(output_size):
    """An adaptive pooling's output_size as two entries (None: the input's)."""
    o = [output_size] * 2 if isinstance(output_size, int) or output_size is None \
        else list(output_size)
    if len(o) == 1:
        o = o * 2
    if len(o) != 2:
        raise ValueError(f"output_size must be an int or a pair, got {output_size!r}")
    return o


def _adaptive_shape(input, output_size):
    """input's leading dims + output_size (None entries keep the input's size)."""
    o = _output_pair(output_size)
    shape = tuple(input.shape)
    if input.ndim in (3, 4):
        shape = shape[:-2] + tuple(shape[-2 + i] if v is None else v for i, v in enumerate(o))
    return shape


def _shape_2d(shape):
    """(.., L) -> (.., 1, L): a 1-d pooling's shape as the 2-d kernel's."""
    shape = tuple(shape)
    return shape[:-1] + (1,) + shape[-1:]


def define(L):
    """This family's functions on kernel library L (see _library)."""
    C, check, ptr, empty, window, int64 = L.C, L.check, L.ptr, L.empty, L.window, L.int64

    def _pool_shape(input, k, s, p, d, ceil_mode):
        if input.ndim not in (3, 4):
            return (0,)
        return tuple(input.shape[:-2]) + (window(input.shape[-2], k[0], s[0], p[0], d[0],
                                                 ceil_mode),
                                          window(input.shape[-1], k[1], s[1], p[1], d[1],
                                                 ceil_mode))

    def _pool3d_shape(input, k, s, p, d, ceil_mode):
        if input.ndim not in (4, 5):
            return (0,)
        return tuple(input.shape[:-3]) + tuple(
            window(input.shape[-3 + i], k[i], s[i], p[i], d[i], ceil_mode) for i in range(3))

    def _as_2d(t, fn, name="input"):
        ptr(t)  # a tensor of this library
        if t.ndim not in (2, 3):
            raise RuntimeError(f"{fn}: Expected 2D or 3D (batch mode) tensor for {name}, "
                               f"but got: {list(t.shape)}")
        return t.unsqueeze(-2)

    # ---- 2-d -----------------------------------------------------------------
    def max_pool2d_forward(input, kernel_size, stride=None, padding=0, dilation=1,
                           ceil_mode=False):
        """(output, indices)"""
        k = pair(kernel_size, "kernel_size")
        s, p, d = _stride2(stride, k), pair(padding, "padding"), pair(dilation, "dilation")
        shape = _pool_shape(input, k, s, p, d, ceil_mode)
        out, ind = empty(shape, input), empty(shape, input, int64)
        check(C.max_pool2d_forward(ptr(out), ptr(ind), ptr(input), k, s, p, d, int(ceil_mode)))
        return out, ind

    def max_pool2d_backward_input(grad_output, input_shape, indices):
        gi = empty(input_shape, grad_output)
        check(C.max_pool2d_backward_input(ptr(gi), ptr(grad_output), ptr(indices)))
        return gi

    def avg_pool2d_forward(input, kernel_size, stride=None, padding=0, ceil_mode=False,
                           count_include_pad=True):
        k = pair(kernel_size, "kernel_size")
        s, p = _stride2(stride, k), pair(padding, "padding")
        out = empty(_pool_shape(input, k, s, p, (1, 1), ceil_mode), input)
        check(C.avg_pool2d_forward(ptr(out), ptr(input), k, s, p, int(ceil_mode),
                                   int(count_include_pad)))
        return out

    def avg_pool2d_backward_input(grad_output, input_shape, kernel_size, stride=None,
                                  padding=0, ceil_mode=False, count_include_pad=True):
        k = pair(kernel_size, "kernel_size")
        gi = empty(input_shape, grad_output)
        check(C.avg_pool2d_backward_input(ptr(gi), ptr(grad_output), k, _stride2(stride, k),
                                          pair(padding, "padding"), int(ceil_mode),
                                          int(count_include_pad)))
        return gi

    def adaptive_avg_pool2d_forward(input, output_size):
        """output_size: int or (h, w); None in it keeps the input's size."""
        out = empty(_adaptive_shape(input, output_size), input)
        check(C.adaptive_avg_pool2d_forward(ptr(out), ptr(input)))
        return out

    def adaptive_avg_pool2d_backward_input(grad_output, input_shape):
        gi = empty(input_shape, grad_output)
        check(C.adaptive_avg_pool2d_backward_input(ptr(gi), ptr(grad_output)))
        return gi

    def adaptive_max_pool2d_forward(input, output_size):
        """(output, indices); indices are flat positions in each H*W plane."""
        shape = _adaptive_shape(input, output_size)
        if any(v < 0 for v in shape):
            raise RuntimeError(f"adaptive_max_pool2d: output_size must be positive, "
                               f"got {output_size!r}")
        out, ind = empty(shape, input), empty(shape, input, int64)
        check(C.adaptive_max_pool2d_forward(ptr(out), ptr(ind), ptr(input)))
        return out, ind

    def adaptive_max_pool2d_backward_input(grad_output, input_shape, indices):
        gi = empty(input_shape, grad_output)
        check(C.adaptive_max_pool2d_backward_input(ptr(gi), ptr(grad_output), ptr(indices)))
        return gi

    # ---- 3-d -----------------------------------------------------------------
    def max_pool3d_forward(input, kernel_size, stride=None, padding=0, dilation=1,
                           ceil_mode=False):
        """(output, indices); indices are flat positions in each D*H*W volume."""
        k = ntuple(kernel_size, 3, "kernel_size")
        s, p = window_stride(stride, k, 3), ntuple(padding, 3, "padding")
        d = ntuple(dilation, 3, "dilation")
        shape = _pool3d_shape(input, k, s, p, d, ceil_mode)
        out, ind = empty(shape, input), empty(shape, input, int64)
        check(C.max_pool3d_forward(ptr(out), ptr(ind), ptr(input), k, s, p, d, int(ceil_mode)))
        return out, ind

    def max_pool3d_backward_input(grad_output, input_shape, indices):
        gi = empty(input_shape, grad_output)
        check(C.max_pool3d_backward_input(ptr(gi), ptr(grad_output), ptr(indices)))
        return gi

    def avg_pool3d_forward(input, kernel_size, stride=None, padding=0, ceil_mode=False,
                           count_include_pad=True, divisor_override=None):
        k = ntuple(kernel_size, 3, "kernel_size")
        s, p = window_stride(stride, k, 3), ntuple(padding, 3, "padding")
        out = empty(_pool3d_shape(input, k, s, p, (1, 1, 1), ceil_mode), input)
        check(C.avg_pool3d_forward(ptr(out), ptr(input), k, s, p, int(ceil_mode),
                                   int(count_include_pad), _divisor(divisor_override)))
        return out

    def avg_pool3d_backward_input(grad_output, input_shape, kernel_size, stride=None,
                                  padding=0, ceil_mode=False, count_include_pad=True,
                                  divisor_override=None):
        k = ntuple(kernel_size, 3, "kernel_size")
        gi = empty(input_shape, grad_output)
        check(C.avg_pool3d_backward_input(ptr(gi), ptr(grad_output), k,
                                          window_stride(stride, k, 3),
                                          ntuple(padding, 3, "padding"), int(ceil_mode),
                                          int(count_include_pad), _divisor(divisor_override)))
        return gi

    # ---- 1-d: the 2-d kernels on (N, C, 1, L) views ------------------------------
    def max_pool1d_forward(input, kernel_size, stride=None, padding=0, dilation=1,
                           ceil_mode=False):
        """(output, indices) for input (N, C, L) or (C, L); indices are positions in L."""
        k = single(kernel_size, "kernel_size")
        s, p = window_stride(stride, k, 1), single(padding, "padding")
        d = single(dilation, "dilation")
        x = _as_2d(input, "max_pool1d")
        shape = tuple(x.shape[:-1]) + (window(x.shape[-1], k, s, p, d, ceil_mode),)
        out, ind = empty(shape, input), empty(shape, input, int64)
        check(C.max_pool2d_forward(ptr(out), ptr(ind), ptr(x), [1, k], [1, s], [0, p], [1, d],
                                   int(ceil_mode)))
        return out.squeeze(-2), ind.squeeze(-2)

    def max_pool1d_backward_input(grad_output, input_shape, indices):
        go = _as_2d(grad_output, "max_pool1d_backward_input", "grad_output")
        ind = _as_2d(indices, "max_pool1d_backward_input", "indices")
        gi = empty(_shape_2d(input_shape), grad_output)
        check(C.max_pool2d_backward_input(ptr(gi), ptr(go), ptr(ind)))
        return gi.view(*input_shape)

    def avg_pool1d_forward(input, kernel_size, stride=None, padding=0, ceil_mode=False,
                           count_include_pad=True):
        k = single(kernel_size, "kernel_size")
        s, p = window_stride(stride, k, 1), single(padding, "padding")
        x = _as_2d(input, "avg_pool1d")
        shape = tuple(x.shape[:-1]) + (window(x.shape[-1], k, s, p, 1, ceil_mode),)
        out = empty(shape, input)
        check(C.avg_pool2d_forward(ptr(out), ptr(x), [1, k], [1, s], [0, p], int(ceil_mode),
                                   int(count_include_pad)))
        return out.squeeze(-2)

    def avg_pool1d_backward_input(grad_output, input_shape, kernel_size, stride=None,
                                  padding=0, ceil_mode=False, count_include_pad=True):
        k = single(kernel_size, "kernel_size")
        s = window_stride(stride, k, 1)
        go = _as_2d(grad_output, "avg_pool1d_backward_input", "grad_output")
        gi = empty(_shape_2d(input_shape), grad_output)
        check(C.avg_pool2d_backward_input(ptr(gi), ptr(go), [1, k], [1, s],
                                          [0, single(padding, "padding")], int(ceil_mode),
                                          int(count_include_pad)))
        return gi.view(*input_shape)

    def adaptive_max_pool1d_forward(input, output_size):
        """(output, indices) for input (N, C, L) or (C, L); indices are positions in L."""
        x = _as_2d(input, "adaptive_max_pool1d")
        o = single(output_size, "output_size")
        if o < 0:
            raise RuntimeError(f"adaptive_max_pool1d: output_size must be positive, got {o}")
        shape = tuple(x.shape[:-1]) + (o,)
        out, ind = empty(shape, input), empty(shape, input, int64)
        check(C.adaptive_max_pool2d_forward(ptr(out), ptr(ind), ptr(x)))
        return out.squeeze(-2), ind.squeeze(-2)

    def adaptive_max_pool1d_backward_input(grad_output, input_shape, indices):
        go = _as_2d(grad_output, "adaptive_max_pool1d_backward_input", "grad_output")
        ind = _as_2d(indices, "adaptive_max_pool1d_backward_input", "indices")
        gi = empty(_shape_2d(input_shape), grad_output)
        check(C.adaptive_max_pool2d_backward_input(ptr(gi), ptr(go), ptr(ind)))
        return gi.view(*input_shape)

    def adaptive_avg_pool1d_forward(input, output_size):
        x = _as_2d(input, "adaptive_avg_pool1d")
        o = single(output_size, "output_size")
        if o < 0:
            raise RuntimeError(f"adaptive_avg_pool1d: output_size must be positive, got {o}")
        out = empty(tuple(x.shape[:-1]) + (o,), input)
        check(C.adaptive_avg_pool2d_forward(ptr(out), ptr(x)))
        return out.squeeze(-2)

    def adaptive_avg_pool1d_backward_input(grad_output, input_shape):
        go = _as_2d(grad_output, "adaptive_avg_pool1d_backward_input", "grad_output")
        gi = empty(_shape_2d(input_shape), grad_output)
        check(C.adaptive_avg_pool2d_backward_input(ptr(gi), ptr(go)))
        return gi.view(*input_shape)

    return {n: v for n, v in locals().items() if n in NAMES}
