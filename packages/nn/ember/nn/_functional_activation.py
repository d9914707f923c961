"""ember.nn.functional: activations (relu ... tanhshrink, the shrinks, prelu,
glu) and softmax."""
import math
import warnings

import ember
from ember.amp.policy import FP32, NATIVE

from . import _kernels
from ._functional_common import _inplace, _softplus1, autocast, follows_autocast

__all__ = ["relu", "relu_", "threshold", "relu6", "leaky_relu", "elu", "celu", "selu", "gelu",
           "silu", "softplus", "hardtanh", "hardswish", "hardsigmoid", "mish", "sigmoid",
           "tanh", "logsigmoid", "softsign", "tanhshrink", "hardshrink", "softshrink", "prelu",
           "glu", "softmax", "softmin", "log_softmax"]


def relu(input, inplace=False):
    return input.relu_() if inplace else _kernels.kernel("relu")(input)


def relu_(input):
    return input.relu_()


def threshold(input, threshold, value, inplace=False):
    return _inplace(input, lambda x: ember.where(x > threshold, x, ember.full_like(x, value)),
                    inplace)


def relu6(input, inplace=False):
    return hardtanh(input, 0.0, 6.0, inplace)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    return _inplace(input, lambda x: ember.where(x > 0, x, x * negative_slope), inplace)


@autocast(NATIVE, NATIVE)
def elu(input, alpha=1.0, inplace=False):
    # expm1 of the clamped input, so the unselected branch cannot overflow
    return _inplace(input, lambda x: ember.where(x > 0, x, alpha * x.clamp(max=0).expm1()),
                    inplace)


@autocast(NATIVE, NATIVE)
def celu(input, alpha=1.0, inplace=False):
    return _inplace(input, lambda x: ember.where(x > 0, x,
                                                 alpha * (x.clamp(max=0) / alpha).expm1()),
                    inplace)


_SELU_ALPHA = 1.6732632423543772848170429916717


_SELU_SCALE = 1.0507009873554804934193349852946


@autocast(NATIVE, NATIVE)
def selu(input, inplace=False):
    return _inplace(input, lambda x: _SELU_SCALE * elu(x, _SELU_ALPHA), inplace)


def gelu(input, approximate="none"):
    if approximate == "none":
        return 0.5 * input * (1.0 + (input * (1.0 / math.sqrt(2.0))).erf())
    if approximate == "tanh":
        inner = math.sqrt(2.0 / math.pi) * (input + 0.044715 * input * input * input)
        return 0.5 * input * (1.0 + inner.tanh())
    raise RuntimeError(f"approximate argument must be either none or tanh, got {approximate!r}")


def silu(input, inplace=False):
    return _inplace(input, lambda x: x * x.sigmoid(), inplace)


@autocast(FP32, NATIVE)
def softplus(input, beta=1.0, threshold=20.0):
    z = input * beta
    soft = _softplus1(z) / beta if beta != 1 else _softplus1(z)
    return ember.where(z > threshold, input, soft)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _inplace(input, lambda x: x.clamp(min_val, max_val), inplace)


def hardswish(input, inplace=False):
    return _inplace(input, lambda x: x * (x + 3.0).clamp(0.0, 6.0) / 6.0, inplace)


def hardsigmoid(input, inplace=False):
    return _inplace(input, lambda x: (x + 3.0).clamp(0.0, 6.0) / 6.0, inplace)


@autocast(NATIVE, NATIVE)
def mish(input, inplace=False):
    return _inplace(input, lambda x: x * _softplus1(x).tanh(), inplace)


def sigmoid(input):
    return input.sigmoid()


def tanh(input):
    return input.tanh()


@autocast(NATIVE, NATIVE)
def logsigmoid(input):
    return -_softplus1(-input)


def softsign(input):
    return input / (1 + input.abs())


def tanhshrink(input):
    return input - input.tanh()


def hardshrink(input, lambd=0.5):
    """x where |x| > lambd, else 0."""
    return ember.where(input.abs() > lambd, input, input * 0)


def softshrink(input, lambd=0.5):
    """x - lambd above lambd, x + lambd below -lambd, else 0."""
    if lambd < 0:
        top = ember.finfo(input.dtype).max if input.is_floating_point() else float("inf")
        raise RuntimeError(f"lambda must be in range [0, {top:g}] for input dtype "
                           f"{input.dtype._title}, but found {lambd}")
    return input - input.clamp(-lambd, lambd)


def prelu(input, weight):
    """max(0, x) + weight * min(0, x), weight one value or one per channel
    (dim 1)."""
    channels = input.shape[1] if input.dim() >= 2 else 1
    if weight.numel() != 1 and weight.numel() != channels:
        raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found "
                           f"parameter numbers = {weight.numel()} and channel size = "
                           f"{channels}.")
    if weight.dim() > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: "
                           f"ndim = {weight.dim()}")
    if weight.numel() != 1:
        weight = weight.reshape([channels] + [1] * (input.dim() - 2))
    return ember.where(input >= 0, input, input * weight)


def glu(input, dim=-1):
    """a * sigmoid(b), a and b the two halves of input along dim."""
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = dim % input.dim()
    if input.shape[d] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size "
                           f"{input.shape[d]}")
    a, b = input.chunk(2, d)
    return a * b.sigmoid()


def _softmax_dim(ndim):
    warnings.warn("Implicit dimension choice for softmax has been deprecated. Change the "
                  "call to include dim=X as an argument.", UserWarning, stacklevel=3)
    return 0 if ndim in (0, 1, 3) else 1


@follows_autocast
def softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _softmax_dim(input.dim())
    if dtype is not None:
        input = input.to(dtype)
    return _kernels.kernel("softmax")(input, dim)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    return softmax(-input, dim, dtype=dtype)


@follows_autocast
def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _softmax_dim(input.dim())
    if dtype is not None:
        input = input.to(dtype)
    return _kernels.kernel("log_softmax")(input, dim)


# ---- samples: argument lists every function here is tested with
# (tests/test_functional_samples.py: gradcheck and gradgradcheck in float64,
# contiguous and non-contiguous, CUDA against the CPU, and PyTorch's
# torch.nn.functional on the same values) -----------------------------------
from ember._ops.samples import S, T  # noqa: E402

SAMPLES = {
    "relu": [S(T(3, 4))],
    "relu_": [S(T(3, 4, grad=False))],
    "threshold": [S(T(3, 4), 0.5, -1.0)],
    "relu6": [S(T(3, 4, low=-1.0, high=7.0))],
    "leaky_relu": [S(T(3, 4)), S(T(3, 4), 0.2)],
    "elu": [S(T(3, 4)), S(T(3, 4), alpha=0.5)],
    "celu": [S(T(3, 4), alpha=2.0)],
    "selu": [S(T(3, 4))],
    "gelu": [S(T(3, 4)), S(T(3, 4), approximate="tanh")],
    "silu": [S(T(3, 4))],
    "softplus": [S(T(3, 4)), S(T(3, 4), beta=2.0, threshold=1.0)],
    "hardtanh": [S(T(3, 4)), S(T(3, 4), -0.5, 0.7)],
    "hardswish": [S(T(3, 4, low=-4.0, high=4.0))],
    "hardsigmoid": [S(T(3, 4, low=-4.0, high=4.0))],
    "mish": [S(T(3, 4))],
    "sigmoid": [S(T(3, 4))],
    "tanh": [S(T(3, 4))],
    "logsigmoid": [S(T(3, 4))],
    "softsign": [S(T(3, 4))],
    "tanhshrink": [S(T(3, 4))],
    "hardshrink": [S(T(3, 4, low=-2.0, high=2.0)), S(T(3, 4, low=-2.0, high=2.0), 1.1)],
    "softshrink": [S(T(3, 4, low=-2.0, high=2.0)), S(T(3, 4, low=-2.0, high=2.0), lambd=0.8)],
    "prelu": [S(T(2, 3, 4), T(1)), S(T(2, 3, 4, 5), T(3)), S(T(5), T(1), name="1d")],
    "glu": [S(T(3, 4)), S(T(2, 6, 3), dim=1)],
    "softmax": [S(T(3, 4), dim=1), S(T(2, 3, 4), dim=0)],
    "softmin": [S(T(3, 4), dim=1)],
    "log_softmax": [S(T(3, 4), dim=1), S(T(2, 3, 4), dim=-1)],
}
