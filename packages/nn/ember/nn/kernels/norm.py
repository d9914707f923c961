"""Normalisation: layer_norm, group_norm, batch_norm (instance_norm is
batch_norm over (1, N C, *) views, composed in ember.nn.functional)."""
import ember
from ember._ops.samples import S, T
from ember.amp.policy import FP32, INPUT_DTYPE

from . import Kernel


class _Norm(Kernel):
    """(input, weight, bias, ...): weight and bias (or None) are scaled and
    added per normalised element; gradients flow to the three."""
    differentiable = 3


class layer_norm(_Norm):
    """(input, weight, bias, normalized_shape, eps): normalises over the last
    len(normalized_shape) dimensions."""
    samples = [S(T(3, 4, 5), T(4, 5), T(4, 5), (4, 5), 1e-5),
               S(T(2, 6), None, None, (6,), 1e-5)]
    node = "NativeLayerNormBackward0"
    autocast = (FP32, INPUT_DTYPE)

    @staticmethod
    def composed(input, weight, bias, normalized_shape, eps):
        dims = tuple(range(-len(normalized_shape), 0))
        mean = input.mean(dims, keepdim=True)
        centered = input - mean
        var = (centered * centered).mean(dims, keepdim=True)
        out = centered * (var + eps).rsqrt()
        if weight is not None:
            out = out * weight
        if bias is not None:
            out = out + bias
        return out

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


class group_norm(_Norm):
    """(input, weight, bias, num_groups, eps): normalises each sample's
    num_groups channel groups (input (N, C, *), C divisible by num_groups);
    weight, bias (C,) or None."""
    samples = [S(T(2, 6, 3, 2), T(6), T(6), 3, 1e-5), S(T(3, 4, 5), None, None, 2, 1e-5)]
    node = "NativeGroupNormBackward0"
    autocast = (FP32, INPUT_DTYPE)

    @staticmethod
    def composed(input, weight, bias, num_groups, eps):
        n, c = input.shape[:2]
        x = input.reshape(n, num_groups, -1)
        mean = x.mean(-1, keepdim=True)
        centered = x - mean
        var = (centered * centered).mean(-1, keepdim=True)
        out = (centered * (var + eps).rsqrt()).reshape(input.shape)
        shape = (1, c) + (1,) * (input.dim() - 2)
        if weight is not None:
            out = out * weight.reshape(shape)
        if bias is not None:
            out = out + bias.reshape(shape)
        return out

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


class batch_norm(_Norm):
    """(input, weight, bias, running_mean, running_var, training, momentum,
    eps): normalises over every dimension but 1 (the channels).  In training
    the batch statistics are used and the running ones (when given) updated
    in place with the unbiased variance; in eval the running ones."""
    samples = [S(T(4, 3, 2, 2), T(3), T(3), None, None, True, 0.1, 1e-5),
               S(T(4, 3, 5), T(3), T(3), T(3, grad=False), T(3, low=0.5, high=1.5, grad=False),
                 False, 0.1, 1e-5, name="eval")]
    node = "NativeBatchNormBackward0"
    autocast = (INPUT_DTYPE, INPUT_DTYPE)

    @staticmethod
    def composed(input, weight, bias, running_mean, running_var, training, momentum, eps):
        c = input.shape[1]
        dims = (0,) + tuple(range(2, input.dim()))
        shape = (1, c) + (1,) * (input.dim() - 2)
        if training:
            count = input.numel() // c if c else 0  # no channels: empty statistics
            mean = input.mean(dims)
            centered = input - mean.reshape(shape)
            var = (centered * centered).mean(dims)
            if running_mean is not None:
                with ember.no_grad():
                    running_mean.mul_(1 - momentum).add_(mean.detach() * momentum)
                    running_var.mul_(1 - momentum).add_(
                        var.detach() * (momentum * count / (count - 1)))
            out = centered * (var + eps).rsqrt().reshape(shape)
        else:
            out = (input - running_mean.reshape(shape)) * \
                (running_var + eps).rsqrt().reshape(shape)
        if weight is not None:
            out = out * weight.reshape(shape)
        if bias is not None:
            out = out + bias.reshape(shape)
        return out

    @staticmethod
    def recompute_args(args):
        # recomputing a training-mode batch norm for double backward must not
        # update the running statistics a second time
        x, w, b, running_mean, running_var, training, momentum, eps = args
        return (x, w, b, None, None, True, momentum, eps) if training else args

    @classmethod
    def forward(cls, x, w, b, running_mean, running_var, training, momentum, eps):
        if not cls.floats(x, w, b, running_mean, running_var) or any(
                t is not None and t.dtype != x.dtype for t in (w, b, running_mean, running_var)):
            return NotImplemented
        if (running_mean is not None and not running_mean.is_contiguous()) or \
                (running_var is not None and not running_var.is_contiguous()):
            return NotImplemented  # the kernels update contiguous statistics in place
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
