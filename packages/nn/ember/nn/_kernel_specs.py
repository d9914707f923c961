"""The NN kernel specs: how ember.nn runs a kernel package's functions.

ember-thnn (CPU) and ember-thcunn (GPU) offer the same Python functions
(``conv2d_forward``, ``max_pool2d_backward_input``, ...) on their own raw
tensors; this one table turns either into ember.nn's kernel specs (see
_kernels.py), so a layer's rules are written once for every device.
``specs_for(provider)`` keeps the specs whose functions the provider has:

- ``differentiable``: the first n arguments are the tensors gradients flow
  to, or a tuple of their positions;
- ``forward(*args) -> (outputs, ctx)``, or NotImplemented for a case the
  kernels do not cover (ember.nn then composes ember ops instead);
- ``backward(ctx, grad, inputs, needs)`` -> one raw gradient per
  differentiable input (None where ``needs`` is False).

Only the provider's ``float_dtypes`` run on its kernels; other dtypes
return NotImplemented.
"""


class _Spec:
    """A spec bound to a kernel provider (``k``) by specs_for."""
    k = None
    requires = None   # the provider function it needs (default: <name>_forward)

    @classmethod
    def floats(cls, *tensors):
        return all(t is None or t.dtype in cls.k.float_dtypes for t in tensors)


class conv2d(_Spec):
    """(input, weight, bias, stride, (top, bottom, left, right), dilation, groups)"""
    differentiable = 3

    @classmethod
    def forward(cls, x, w, b, stride, pads, dilation, groups):
        top, bottom, left, right = pads
        if top != bottom or left != right or not cls.floats(x, w, b) or \
                x.dtype != w.dtype or (b is not None and b.dtype != x.dtype):
            return NotImplemented  # asymmetric ('same', even kernel) or mixed dtypes
        out = cls.k.conv2d_forward(x, w, b, stride, (top, left), dilation, groups)
        return out, (tuple(x.shape), tuple(w.shape), stride, (top, left), dilation, groups)

    @classmethod
    def backward(cls, ctx, g, inputs, needs):
        x_shape, w_shape, stride, pad, dilation, groups = ctx
        x, w, _ = inputs
        g = g.contiguous()
        gx = cls.k.conv2d_backward_input(g, x_shape, w, stride, pad, dilation, groups) \
            if needs[0] else None
        gw, gb = None, None
        if needs[1] or needs[2]:
            gw, gb = cls.k.conv2d_backward_params(g, x, w_shape, stride, pad, dilation, groups,
                                               need_weight=needs[1], need_bias=needs[2])
        return gx, gw, gb


class max_pool2d(_Spec):
    """(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)"""
    differentiable = 1

    @classmethod
    def forward(cls, x, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
        if not cls.floats(x):
            return NotImplemented
        out, ind = cls.k.max_pool2d_forward(x, kernel_size, stride, padding, dilation, ceil_mode)
        return ((out, ind) if return_indices else out), (tuple(x.shape), ind)

    @classmethod
    def backward(cls, ctx, g, inputs, needs):
        x_shape, ind = ctx
        return (cls.k.max_pool2d_backward_input(g.contiguous(), x_shape, ind),)


class avg_pool2d(_Spec):
    """(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)"""
    differentiable = 1

    @classmethod
    def forward(cls, x, kernel_size, stride, padding, ceil_mode, count_include_pad,
                divisor_override):
        if divisor_override or not cls.floats(x):
            return NotImplemented
        out = cls.k.avg_pool2d_forward(x, kernel_size, stride, padding, ceil_mode,
                                    count_include_pad)
        return out, (tuple(x.shape), kernel_size, stride, padding, ceil_mode,
                     count_include_pad)

    @classmethod
    def backward(cls, ctx, g, inputs, needs):
        x_shape, k, s, p, ceil_mode, cip = ctx
        return (cls.k.avg_pool2d_backward_input(g.contiguous(), x_shape, k, s, p, ceil_mode, cip),)


class relu(_Spec):
    """(input,)"""
    differentiable = 1
    requires = "activation_forward"

    @classmethod
    def forward(cls, x):
        if not cls.floats(x):
            return NotImplemented
        return cls.k.activation_forward("relu", x), None

    @classmethod
    def backward(cls, ctx, g, inputs, needs):
        return (cls.k.activation_backward_input("relu", g.contiguous(), inputs[0]),)


class layer_norm(_Spec):
    """(input, weight, bias, normalized_shape, eps)"""
    differentiable = 3

    @classmethod
    def forward(cls, x, w, b, normalized_shape, eps):
        if not cls.floats(x, w, b) or any(t is not None and t.dtype != x.dtype for t in (w, b)):
            return NotImplemented
        out, mean, invstd = cls.k.layer_norm_forward(x, normalized_shape, w, b, eps)
        return out, (normalized_shape, mean, invstd)

    @classmethod
    def backward(cls, ctx, g, inputs, needs):
        shape, mean, invstd = ctx
        x, w, _ = inputs
        g = g.contiguous()
        gx = cls.k.layer_norm_backward_input(g, x, shape, w, mean, invstd) if needs[0] else None
        gw = gb = None
        if needs[1] or needs[2]:
            gw, gb = cls.k.layer_norm_backward_params(g, x, shape, mean, invstd,
                                                   need_weight=needs[1], need_bias=needs[2])
        return gx, gw, gb


class group_norm(_Spec):
    """(input, weight, bias, num_groups, eps)"""
    differentiable = 3

    @classmethod
    def forward(cls, x, w, b, num_groups, eps):
        if not cls.floats(x, w, b) or any(t is not None and t.dtype != x.dtype for t in (w, b)):
            return NotImplemented
        out, mean, rstd = cls.k.group_norm_forward(x, num_groups, w, b, eps)
        return out, (num_groups, mean, rstd)

    @classmethod
    def backward(cls, ctx, g, inputs, needs):
        num_groups, mean, rstd = ctx
        x, w, _ = inputs
        g = g.contiguous()
        gx = cls.k.group_norm_backward_input(g, x, num_groups, w, mean, rstd) \
            if needs[0] else None
        gw = gb = None
        if needs[1] or needs[2]:
            gw, gb = cls.k.group_norm_backward_params(g, x, num_groups, mean, rstd,
                                                   need_weight=needs[1], need_bias=needs[2])
        return gx, gw, gb


class batch_norm(_Spec):
    """(input, weight, bias, running_mean, running_var, training, momentum, eps)"""
    differentiable = 3

    @classmethod
    def forward(cls, x, w, b, running_mean, running_var, training, momentum, eps):
        if not cls.floats(x, w, b, running_mean, running_var) or any(
                t is not None and t.dtype != x.dtype for t in (w, b, running_mean, running_var)):
            return NotImplemented
        out, mean, invstd = cls.k.batch_norm_forward(x, w, b, running_mean, running_var,
                                                  training, momentum, eps)
        return out, (training, mean, invstd)

    @classmethod
    def backward(cls, ctx, g, inputs, needs):
        training, mean, invstd = ctx
        x, w, _ = inputs
        g = g.contiguous()
        gx = cls.k.batch_norm_backward_input(g, x, w, mean, invstd, training) \
            if needs[0] else None
        gw = gb = None
        if needs[1] or needs[2]:
            gw, gb = cls.k.batch_norm_backward_params(g, x, mean, invstd,
                                                   need_weight=needs[1], need_bias=needs[2])
        return gx, gw, gb


class cross_entropy(_Spec):
    """(input, target, weight, reduction, ignore_index): class-index targets"""
    differentiable = 1

    @classmethod
    def forward(cls, x, target, weight, reduction, ignore_index):
        if x.ndim not in (1, 2) or not cls.floats(x, weight) or \
                (weight is not None and weight.dtype != x.dtype):
            return NotImplemented
        out, log_probs, total_weight = cls.k.cross_entropy_forward(x, target, weight, reduction,
                                                                ignore_index)
        return out, (log_probs, target, weight, total_weight, reduction, ignore_index)

    @classmethod
    def backward(cls, ctx, g, inputs, needs):
        log_probs, target, weight, total_weight, reduction, ignore_index = ctx
        return (cls.k.cross_entropy_backward_input(g.contiguous(), log_probs, target, weight,
                                                total_weight, reduction, ignore_index),)


class conv3d(_Spec):
    """(input, weight, bias, stride, (front, back, top, bottom, left, right), dilation, groups)"""
    differentiable = 3

    @classmethod
    def forward(cls, x, w, b, stride, pads, dilation, groups):
        front, back, top, bottom, left, right = pads
        if front != back or top != bottom or left != right or not cls.floats(x, w, b) or \
                x.dtype != w.dtype or (b is not None and b.dtype != x.dtype):
            return NotImplemented  # asymmetric ('same', even kernel) or mixed dtypes
        pad = (front, top, left)
        out = cls.k.conv3d_forward(x, w, b, stride, pad, dilation, groups)
        return out, (tuple(x.shape), tuple(w.shape), stride, pad, dilation, groups)

    @classmethod
    def backward(cls, ctx, g, inputs, needs):
        x_shape, w_shape, stride, pad, dilation, groups = ctx
        x, w, _ = inputs
        g = g.contiguous()
        gx = cls.k.conv3d_backward_input(g, x_shape, w, stride, pad, dilation, groups) \
            if needs[0] else None
        gw, gb = None, None
        if needs[1] or needs[2]:
            gw, gb = cls.k.conv3d_backward_params(g, x, w_shape, stride, pad, dilation, groups,
                                               need_weight=needs[1], need_bias=needs[2])
        return gx, gw, gb


class conv_transpose2d(_Spec):
    """(input, weight, bias, stride, padding, output_padding, groups, dilation)"""
    differentiable = 3

    @classmethod
    def forward(cls, x, w, b, stride, padding, output_padding, groups, dilation):
        if not cls.floats(x, w, b) or x.dtype != w.dtype or (b is not None and b.dtype != x.dtype):
            return NotImplemented
        out = cls.k.conv_transpose2d_forward(x, w, b, stride, padding, output_padding, dilation,
                                          groups)
        return out, (tuple(x.shape), tuple(w.shape), stride, padding, output_padding,
                     dilation, groups)

    @classmethod
    def backward(cls, ctx, g, inputs, needs):
        x_shape, w_shape, stride, padding, output_padding, dilation, groups = ctx
        x, w, _ = inputs
        g = g.contiguous()
        gx = cls.k.conv_transpose2d_backward_input(g, x_shape, w, stride, padding, output_padding,
                                                dilation, groups) if needs[0] else None
        gw, gb = None, None
        if needs[1] or needs[2]:
            gw, gb = cls.k.conv_transpose2d_backward_params(
                g, x, w_shape, stride, padding, output_padding, dilation, groups,
                need_weight=needs[1], need_bias=needs[2])
        return gx, gw, gb


class max_pool3d(_Spec):
    """(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)"""
    differentiable = 1

    @classmethod
    def forward(cls, x, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
        if not cls.floats(x):
            return NotImplemented
        out, ind = cls.k.max_pool3d_forward(x, kernel_size, stride, padding, dilation, ceil_mode)
        return ((out, ind) if return_indices else out), (tuple(x.shape), ind)

    @classmethod
    def backward(cls, ctx, g, inputs, needs):
        x_shape, ind = ctx
        return (cls.k.max_pool3d_backward_input(g.contiguous(), x_shape, ind),)


class avg_pool3d(_Spec):
    """(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)"""
    differentiable = 1

    @classmethod
    def forward(cls, x, kernel_size, stride, padding, ceil_mode, count_include_pad,
                divisor_override):
        if not cls.floats(x):
            return NotImplemented
        out = cls.k.avg_pool3d_forward(x, kernel_size, stride, padding, ceil_mode,
                                    count_include_pad, divisor_override)
        return out, (tuple(x.shape), kernel_size, stride, padding, ceil_mode,
                     count_include_pad, divisor_override)

    @classmethod
    def backward(cls, ctx, g, inputs, needs):
        x_shape, k, s, p, ceil_mode, cip, divisor = ctx
        return (cls.k.avg_pool3d_backward_input(g.contiguous(), x_shape, k, s, p, ceil_mode, cip,
                                             divisor),)


class adaptive_max_pool2d(_Spec):
    """(input, output_size, return_indices)"""
    differentiable = 1

    @classmethod
    def forward(cls, x, output_size, return_indices):
        if not cls.floats(x):
            return NotImplemented
        out, ind = cls.k.adaptive_max_pool2d_forward(x, output_size)
        return ((out, ind) if return_indices else out), (tuple(x.shape), ind)

    @classmethod
    def backward(cls, ctx, g, inputs, needs):
        x_shape, ind = ctx
        return (cls.k.adaptive_max_pool2d_backward_input(g.contiguous(), x_shape, ind),)


class upsample_nearest2d(_Spec):
    """(input, output_size, scales)"""
    differentiable = 1

    @classmethod
    def forward(cls, x, output_size, scales):
        if not cls.floats(x):
            return NotImplemented
        return cls.k.upsample_nearest2d_forward(x, output_size, scales), (tuple(x.shape), scales)

    @classmethod
    def backward(cls, ctx, g, inputs, needs):
        shape, scales = ctx
        return (cls.k.upsample_nearest2d_backward_input(g.contiguous(), shape, scales),)


class upsample_bilinear2d(_Spec):
    """(input, output_size, align_corners, scales)"""
    differentiable = 1

    @classmethod
    def forward(cls, x, output_size, align_corners, scales):
        if not cls.floats(x):
            return NotImplemented
        out = cls.k.upsample_bilinear2d_forward(x, output_size, align_corners, scales)
        return out, (tuple(x.shape), align_corners, scales)

    @classmethod
    def backward(cls, ctx, g, inputs, needs):
        shape, align_corners, scales = ctx
        return (cls.k.upsample_bilinear2d_backward_input(g.contiguous(), shape, align_corners,
                                                      scales),)


def _padding_kernel(kind):
    """reflection_pad / replication_pad over 1, 2 or 3 spatial dimensions."""
    class pad(_Spec):
        __doc__ = "(input, padding): F.pad order, last dimension first"
        differentiable = 1

        @classmethod
        def forward(cls, x, padding):
            k = len(padding) // 2
            if not cls.floats(x) or k not in (1, 2, 3) or x.ndim != k + 2:
                return NotImplemented
            out = getattr(cls.k, f"{kind}_pad{k}d_forward")(x, padding)
            return out, (tuple(x.shape), tuple(padding), k)

        @classmethod
        def backward(cls, ctx, g, inputs, needs):
            shape, padding, k = ctx
            bwd = getattr(cls.k, f"{kind}_pad{k}d_backward_input")
            return (bwd(g.contiguous(), shape, padding),)
    pad.__name__ = pad.__qualname__ = f"{kind}_pad"
    pad.requires = f"{kind}_pad1d_forward"
    return pad


reflection_pad = _padding_kernel("reflection")
replication_pad = _padding_kernel("replication")


class embedding_bag(_Spec):
    """(weight, indices, offsets, mode, per_sample_weights, padding_idx); offsets
    hold B + 1 entries (the last one the number of indices)"""
    differentiable = (0, 4)  # weight and per_sample_weights

    @classmethod
    def forward(cls, weight, indices, offsets, mode, per_sample_weights, padding_idx):
        if not cls.floats(weight, per_sample_weights) or (
                per_sample_weights is not None and per_sample_weights.dtype != weight.dtype):
            return NotImplemented
        out, offset2bag, bag_size, max_indices = cls.k.embedding_bag_forward(
            weight, indices, offsets, mode, per_sample_weights, True, padding_idx)
        return out, (offset2bag, bag_size, max_indices, indices, mode, padding_idx)

    @classmethod
    def backward(cls, ctx, g, inputs, needs):
        offset2bag, bag_size, max_indices, indices, mode, padding_idx = ctx
        weight, per_sample_weights = inputs
        g = g.contiguous()
        gw = cls.k.embedding_bag_backward_params(
            g, indices, offset2bag, bag_size, max_indices, weight.shape[0], mode,
            per_sample_weights, padding_idx) if needs[0] else None
        gp = cls.k.embedding_bag_backward_per_sample_weights(
            g, weight, indices, offset2bag, mode, padding_idx) if needs[1] else None
        return gw, gp


SPECS = {spec.__name__: spec for spec in list(globals().values())
         if isinstance(spec, type) and issubclass(spec, _Spec) and spec is not _Spec}


def specs_for(provider):
    """{kernel name: spec} bound to `provider` (a kernel package's object),
    for the kernels whose functions it has."""
    out = {}
    for name, spec in SPECS.items():
        if hasattr(provider, spec.requires or f"{name}_forward"):
            out[name] = type(name, (spec,), {"k": provider})
    return out
