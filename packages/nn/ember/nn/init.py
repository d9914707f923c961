"""ember.nn.init: in-place initialisers with PyTorch's gains and fan modes.
Each fills its tensor under no_grad and returns it."""
import math
import warnings

import numpy as np

import ember

__all__ = ["calculate_gain", "uniform_", "normal_", "constant_", "zeros_", "ones_", "eye_",
           "dirac_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_",
           "kaiming_normal_", "orthogonal_", "trunc_normal_", "sparse_"]


def calculate_gain(nonlinearity, param=None):
    linear = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
              "conv_transpose3d"]
    if nonlinearity in linear or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _fans(tensor):
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than "
                         "2 dimensions")
    receptive = 1
    for s in tensor.shape[2:]:
        receptive *= s
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


_calculate_fan_in_and_fan_out = _fans


def _fan(tensor, mode):
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = _fans(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    with ember.no_grad():
        return tensor.uniform_(a, b, generator=generator) if generator is not None \
            else tensor.uniform_(a, b)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    with ember.no_grad():
        return tensor.normal_(mean, std, generator=generator) if generator is not None \
            else tensor.normal_(mean, std)


def constant_(tensor, val):
    with ember.no_grad():
        return tensor.fill_(val)


def zeros_(tensor):
    with ember.no_grad():
        return tensor.zero_()


def ones_(tensor):
    with ember.no_grad():
        return tensor.fill_(1.0)


def eye_(tensor):
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with ember.no_grad():
        return tensor.copy_(ember.eye(*tensor.shape, dtype=tensor.dtype, device=tensor.device))


def dirac_(tensor, groups=1):
    d = tensor.dim()
    if d not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    out_per_group = tensor.shape[0] // groups
    values = np.zeros(tuple(tensor.shape))
    for g in range(groups):
        for i in range(min(out_per_group, tensor.shape[1])):
            idx = (g * out_per_group + i, i) + tuple(s // 2 for s in tensor.shape[2:])
            values[idx] = 1
    with ember.no_grad():
        values = ember.from_numpy(values).to(device=tensor.device, dtype=tensor.dtype)
        return tensor.copy_(values)


def xavier_uniform_(tensor, gain=1.0, generator=None):
    fan_in, fan_out = _fans(tensor)
    a = gain * math.sqrt(6.0 / float(fan_in + fan_out))
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    fan_in, fan_out = _fans(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op")
        return tensor
    bound = math.sqrt(3.0) * calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode))
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op")
        return tensor
    std = calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode))
    return normal_(tensor, 0.0, std, generator)


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Normal(mean, std) truncated to [a, b], by inverse-CDF sampling (the
    same method as PyTorch)."""
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The "
                      "distribution of values may be incorrect.", stacklevel=2)

    def norm_cdf(x):
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    lo, hi = norm_cdf((a - mean) / std), norm_cdf((b - mean) / std)
    with ember.no_grad():
        tensor.uniform_(2 * lo - 1, 2 * hi - 1)
        tensor.copy_(tensor.erfinv() * (std * math.sqrt(2.0)) + mean)
        tensor.copy_(tensor.clamp(a, b))
    return tensor


def orthogonal_(tensor, gain=1, generator=None):
    """A (semi-)orthogonal matrix from the QR decomposition of a normal one,
    signs fixed so the distribution is uniform (Saxe et al.)."""
    if tensor.dim() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    # QR with ember.linalg in float64 on the CPU, then one copy to the device
    flat = ember.randn(rows, cols, dtype=ember.float64, generator=generator)
    if rows < cols:
        flat = flat.t()
    with ember.no_grad():
        q, r = ember.linalg.qr(flat)
        q = q * r.diagonal().sign()
        if rows < cols:
            q = q.t()
        return tensor.copy_((q * gain).reshape(tensor.shape)
                            .to(device=tensor.device, dtype=tensor.dtype))


def sparse_(tensor, sparsity, std=0.01, generator=None):
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    zeros = int(math.ceil(sparsity * rows))
    with ember.no_grad():
        tensor.normal_(0, std)
        for c in range(cols):
            idx = ember.randperm(rows, device=tensor.device)[:zeros]
            tensor[idx, c] = 0
    return tensor


# the old spellings without the trailing underscore (deprecated in PyTorch)
uniform, normal, constant = uniform_, normal_, constant_
xavier_uniform, xavier_normal = xavier_uniform_, xavier_normal_
kaiming_uniform, kaiming_normal, orthogonal = kaiming_uniform_, kaiming_normal_, orthogonal_
