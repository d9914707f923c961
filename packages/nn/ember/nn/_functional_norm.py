"""ember.nn.functional: layer, RMS, batch, group and instance norm, normalize,
cosine_similarity."""
import numbers

import ember
from ember.amp.policy import FP32, INPUT_DTYPE

from . import _kernels
from ._functional_common import _check_tensors, autocast, follows_autocast

__all__ = ["layer_norm", "rms_norm", "batch_norm", "normalize", "cosine_similarity",
           "group_norm", "instance_norm"]


@follows_autocast
def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    if isinstance(normalized_shape, numbers.Integral):
        normalized_shape = (normalized_shape,)
    normalized_shape = tuple(normalized_shape)
    k = len(normalized_shape)
    if tuple(input.shape[input.dim() - k:]) != normalized_shape or input.dim() < k:
        raise RuntimeError(
            f"Given normalized_shape={list(normalized_shape)}, expected input with shape "
            f"[*, {', '.join(str(s) for s in normalized_shape)}], but got input of size"
            f"{list(input.shape)}")
    return _kernels.kernel("layer_norm")(input, weight, bias, normalized_shape, eps)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """x / sqrt(mean(x^2 over the last dims) + eps) (times weight); eps
    defaults to the dtype's machine epsilon, as PyTorch's."""
    if isinstance(normalized_shape, numbers.Integral):
        normalized_shape = (normalized_shape,)
    normalized_shape = tuple(normalized_shape)
    k = len(normalized_shape)
    if tuple(input.shape[input.dim() - k:]) != normalized_shape or input.dim() < k:
        raise RuntimeError(
            f"Given normalized_shape={list(normalized_shape)}, expected input with shape "
            f"[*{', '.join(str(s) for s in normalized_shape)}], but got input of size"
            f"{list(input.shape)}")
    if weight is not None and tuple(weight.shape) != normalized_shape:
        raise RuntimeError(f"Expected weight to be of same shape as normalized_shape, but got "
                           f"weight of shape {list(weight.shape)} and normalized_shape = "
                           f"{list(normalized_shape)}")
    if eps is None:
        eps = ember.finfo(input.dtype).eps
    dims = tuple(range(input.dim() - k, input.dim()))
    y = input * ember.rsqrt((input * input).mean(dims, keepdim=True) + eps) if k else input
    return y if weight is None else y * weight


@follows_autocast
def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    """Normalises over every dimension but 1 (the channels).  In training
    the batch statistics are used and the running ones updated in place
    (with the unbiased variance, as PyTorch); in eval the running ones."""
    if input.dim() < 2:
        raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")
    c = input.shape[1]
    if training and c and input.numel() // c <= 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got "
                         f"input size {list(input.shape)}")
    if not training and (running_mean is None or running_var is None):
        raise RuntimeError("running_mean and running_var must be defined in evaluation mode")
    return _kernels.kernel("batch_norm")(input, weight, bias, running_mean, running_var,
                                         training, 0.1 if momentum is None else momentum, eps)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    if out is not None:
        raise NotImplementedError("out= is not supported")
    return input / input.norm(p, dim, keepdim=True).clamp(min=eps)


@autocast(FP32, None)
def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    _check_tensors("cosine_similarity", x1=x1, x2=x2)
    n1 = x1.norm(2, dim).clamp(min=eps)
    n2 = x2.norm(2, dim).clamp(min=eps)
    return (x1 * x2).sum(dim) / (n1 * n2)


@follows_autocast
def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received "
                           f"{input.dim()}")
    n, c = input.shape[:2]
    if num_groups <= 0:
        raise RuntimeError(f"Expected num groups to be greater than 0, got {num_groups}")
    if c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by "
                           f"num_groups, but got input of shape {list(input.shape)} and "
                           f"num_groups={num_groups}")
    return _kernels.kernel("group_norm")(input, weight, bias, num_groups, eps)


@autocast(INPUT_DTYPE, INPUT_DTYPE)
def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.1, eps=1e-5):
    """Normalises each (sample, channel) over its spatial dimensions."""
    n, c = input.shape[:2]
    if use_input_stats:
        x = input.reshape(1, n * c, *input.shape[2:])
        rm = running_mean.repeat(n) if running_mean is not None else None
        rv = running_var.repeat(n) if running_var is not None else None
        out = batch_norm(x, rm, rv, None, None, True, momentum, eps).reshape(input.shape)
        if running_mean is not None:
            with ember.no_grad():
                running_mean.copy_(rm.view(n, c).mean(0))
                running_var.copy_(rv.view(n, c).mean(0))
    else:
        out = batch_norm(input, running_mean, running_var, None, None, False, momentum, eps)
    shape = (1, c) + (1,) * (input.dim() - 2)
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out


# ---- samples: argument lists every function here is tested with
# (tests/test_functional_samples.py: gradcheck and gradgradcheck in float64,
# contiguous and non-contiguous, CUDA against the CPU, and PyTorch's
# torch.nn.functional on the same values) -----------------------------------
from ember._ops.samples import S, T  # noqa: E402

SAMPLES = {
    "layer_norm": [S(T(2, 3, 4), (4,)), S(T(2, 3, 4), (3, 4), T(3, 4), T(3, 4))],
    "rms_norm": [S(T(2, 3, 4), (4,)), S(T(2, 3, 4), (3, 4), T(3, 4), eps=1e-3)],
    "batch_norm": [S(T(4, 3, 2), T(3, grad=False), T(3, low=0.5, high=1.5, grad=False),
                     T(3), T(3)),
                   S(T(4, 3), T(3, grad=False), T(3, low=0.5, high=1.5, grad=False), T(3),
                     T(3), training=True)],
    "normalize": [S(T(3, 4)), S(T(3, 4), p=1.0, dim=0)],
    "cosine_similarity": [S(T(3, 4), T(3, 4)), S(T(3, 4), T(4), dim=-1)],
    "group_norm": [S(T(2, 4, 5), 2, T(4), T(4))],
    "instance_norm": [S(T(2, 3, 5), weight=T(3), bias=T(3))],
}
