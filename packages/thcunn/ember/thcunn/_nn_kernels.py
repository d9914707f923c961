"""libTHCUNN kernels as ember.nn kernel specs (the ``nn_kernels()`` table),
with the same arguments and contract as ember.thnn's (see
packages/thnn/ember/thnn/_nn_kernels.py): ``differentiable``,
``forward(*args) -> (outputs, ctx)`` or NotImplemented (ember.nn then
composes ember ops), ``backward(ctx, grad, inputs, needs)``.  Raw tensors
are ember.thc tensors; float32 and float64 run here.
"""
import ember.thc as _thc
import ember.thcunn as _k

_FLOATS = (_thc.float32, _thc.float64)


def _floats(*tensors):
    return all(t is None or t.dtype in _FLOATS for t in tensors)


class conv2d:
    """(input, weight, bias, stride, (top, bottom, left, right), dilation, groups)"""
    differentiable = 3

    @staticmethod
    def forward(x, w, b, stride, pads, dilation, groups):
        top, bottom, left, right = pads
        if top != bottom or left != right or not _floats(x, w, b) or \
                x.dtype != w.dtype or (b is not None and b.dtype != x.dtype):
            return NotImplemented  # asymmetric ('same', even kernel) or mixed dtypes
        out = _k.conv2d_forward(x, w, b, stride, (top, left), dilation, groups)
        return out, (tuple(x.shape), tuple(w.shape), stride, (top, left), dilation, groups)

    @staticmethod
    def backward(ctx, g, inputs, needs):
        x_shape, w_shape, stride, pad, dilation, groups = ctx
        x, w, _ = inputs
        g = g.contiguous()
        gx = _k.conv2d_backward_input(g, x_shape, w, stride, pad, dilation, groups) \
            if needs[0] else None
        gw, gb = None, None
        if needs[1] or needs[2]:
            gw, gb = _k.conv2d_backward_params(g, x, w_shape, stride, pad, dilation, groups,
                                               need_weight=needs[1], need_bias=needs[2])
        return gx, gw, gb


class max_pool2d:
    """(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)"""
    differentiable = 1

    @staticmethod
    def forward(x, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
        if not _floats(x):
            return NotImplemented
        out, ind = _k.max_pool2d_forward(x, kernel_size, stride, padding, dilation, ceil_mode)
        return ((out, ind) if return_indices else out), (tuple(x.shape), ind)

    @staticmethod
    def backward(ctx, g, inputs, needs):
        x_shape, ind = ctx
        return (_k.max_pool2d_backward_input(g.contiguous(), x_shape, ind),)


class avg_pool2d:
    """(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)"""
    differentiable = 1

    @staticmethod
    def forward(x, kernel_size, stride, padding, ceil_mode, count_include_pad,
                divisor_override):
        if divisor_override or not _floats(x):
            return NotImplemented
        out = _k.avg_pool2d_forward(x, kernel_size, stride, padding, ceil_mode,
                                    count_include_pad)
        return out, (tuple(x.shape), kernel_size, stride, padding, ceil_mode,
                     count_include_pad)

    @staticmethod
    def backward(ctx, g, inputs, needs):
        x_shape, k, s, p, ceil_mode, cip = ctx
        return (_k.avg_pool2d_backward_input(g.contiguous(), x_shape, k, s, p, ceil_mode, cip),)


class relu:
    """(input,)"""
    differentiable = 1

    @staticmethod
    def forward(x):
        if not _floats(x):
            return NotImplemented
        return _k.activation_forward("relu", x), None

    @staticmethod
    def backward(ctx, g, inputs, needs):
        return (_k.activation_backward_input("relu", g.contiguous(), inputs[0]),)


class batch_norm:
    """(input, weight, bias, running_mean, running_var, training, momentum, eps)"""
    differentiable = 3

    @staticmethod
    def forward(x, w, b, running_mean, running_var, training, momentum, eps):
        if not _floats(x, w, b, running_mean, running_var) or any(
                t is not None and t.dtype != x.dtype for t in (w, b, running_mean, running_var)):
            return NotImplemented
        out, mean, invstd = _k.batch_norm_forward(x, w, b, running_mean, running_var,
                                                  training, momentum, eps)
        return out, (training, mean, invstd)

    @staticmethod
    def backward(ctx, g, inputs, needs):
        training, mean, invstd = ctx
        x, w, _ = inputs
        g = g.contiguous()
        gx = _k.batch_norm_backward_input(g, x, w, mean, invstd, training) \
            if needs[0] else None
        gw = gb = None
        if needs[1] or needs[2]:
            gw, gb = _k.batch_norm_backward_params(g, x, mean, invstd,
                                                   need_weight=needs[1], need_bias=needs[2])
        return gx, gw, gb


class cross_entropy:
    """(input, target, weight, reduction, ignore_index): class-index targets"""
    differentiable = 1

    @staticmethod
    def forward(x, target, weight, reduction, ignore_index):
        if x.ndim not in (1, 2) or not _floats(x, weight) or \
                (weight is not None and weight.dtype != x.dtype):
            return NotImplemented
        out, log_probs, total_weight = _k.cross_entropy_forward(x, target, weight, reduction,
                                                                ignore_index)
        return out, (log_probs, target, weight, total_weight, reduction, ignore_index)

    @staticmethod
    def backward(ctx, g, inputs, needs):
        log_probs, target, weight, total_weight, reduction, ignore_index = ctx
        return (_k.cross_entropy_backward_input(g.contiguous(), log_probs, target, weight,
                                                total_weight, reduction, ignore_index),)


def nn_kernels():
    """{kernel name: spec} for ember.nn."""
    return {name: spec for name, spec in globals().items()
            if isinstance(spec, type) and hasattr(spec, "differentiable")}
