"""Folding an eval-mode batch norm into the convolution or linear layer
before it (PyTorch's names): for inference, one kernel instead of a
convolution followed by a normalisation pass over its output.

In eval mode a batch norm is a fixed affine map per channel,
    y = (x - running_mean) / sqrt(running_var + eps) * weight + bias,
so it folds into the preceding layer's weight (scaled per output channel)
and bias.  The results equal the unfused pair up to float rounding.
"""
import copy

import ember

from ..parameter import Parameter

__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval",
           "fuse_linear_bn_weights"]


def _scale_shift(bn_rm, bn_rv, bn_eps, bn_w, bn_b, dtype):
    """The batch norm's per-channel scale and shift, as plain tensors."""
    rm = bn_rm.detach().to(dtype)
    rv = bn_rv.detach().to(dtype)
    w = ember.ones_like(rm) if bn_w is None else bn_w.detach().to(dtype)
    b = ember.zeros_like(rm) if bn_b is None else bn_b.detach().to(dtype)
    scale = w * ember.rsqrt(rv + bn_eps)
    return scale, b - rm * scale


def fuse_conv_bn_weights(conv_w, conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b, transpose=False):
    """The weight and bias of a convolution followed by an eval-mode batch
    norm, as one convolution's (two new Parameters).  `transpose`: the
    weight is a transposed convolution's (in_channels, out_channels, ...)."""
    if bn_rm is None or bn_rv is None:
        raise ValueError("fuse_conv_bn_weights: the batch norm has no running statistics "
                         "(track_running_stats=False): it normalises with each batch's own, "
                         "which cannot be folded into the convolution")
    out_ch = conv_w.shape[1] if transpose else conv_w.shape[0]
    if bn_rm.numel() != out_ch:
        raise ValueError(f"fuse_conv_bn_weights: the batch norm has {bn_rm.numel()} channels "
                         f"but the convolution has {out_ch} output channels")
    with ember.no_grad():
        scale, shift = _scale_shift(bn_rm, bn_rv, bn_eps, bn_w, bn_b, conv_w.dtype)
        shape = [1] * conv_w.dim()
        shape[1 if transpose else 0] = -1
        w = conv_w.detach() * scale.reshape(shape)
        b = shift if conv_b is None else conv_b.detach().to(conv_w.dtype) * scale + shift
    return (Parameter(w.contiguous(), conv_w.requires_grad),
            Parameter(b.contiguous(), conv_w.requires_grad if conv_b is None else conv_b.requires_grad))


def fuse_conv_bn_eval(conv, bn, transpose=False):
    """A copy of `conv` whose output is bn(conv(x)) for eval-mode modules."""
    if conv.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused = copy.deepcopy(conv)
    fused.weight, fused.bias = fuse_conv_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias,
        transpose)
    return fused


def fuse_linear_bn_weights(linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b):
    """The weight and bias of a linear layer followed by an eval-mode
    BatchNorm1d, as one linear layer's (two new Parameters)."""
    if bn_rm is None or bn_rv is None:
        raise ValueError("fuse_linear_bn_weights: the batch norm has no running statistics "
                         "(track_running_stats=False)")
    out_f = linear_w.shape[0]
    if bn_rm.numel() != out_f:
        raise ValueError(f"fuse_linear_bn_weights: the batch norm has {bn_rm.numel()} "
                         f"features but the linear layer has {out_f} outputs")
    with ember.no_grad():
        scale, shift = _scale_shift(bn_rm, bn_rv, bn_eps, bn_w, bn_b, linear_w.dtype)
        w = linear_w.detach() * scale.unsqueeze(-1)
        b = shift if linear_b is None else linear_b.detach().to(linear_w.dtype) * scale + shift
    return (Parameter(w.contiguous(), linear_w.requires_grad),
            Parameter(b.contiguous(), linear_w.requires_grad if linear_b is None
                      else linear_b.requires_grad))


def fuse_linear_bn_eval(linear, bn):
    """A copy of `linear` whose output is bn(linear(x)) for eval-mode modules."""
    if linear.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused = copy.deepcopy(linear)
    fused.weight, fused.bias = fuse_linear_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias)
    return fused
