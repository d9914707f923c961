"""ember.nn.functional: activations (relu ... tanhshrink) and softmax."""
import math
import warnings

import ember
from ember.amp.policy import FP32, NATIVE

from . import _kernels
from ._functional_common import _inplace, _softplus1, autocast, follows_autocast

__all__ = ["relu", "relu_", "threshold", "relu6", "leaky_relu", "elu", "celu", "selu", "gelu",
           "silu", "softplus", "hardtanh", "hardswish", "hardsigmoid", "mish", "sigmoid",
           "tanh", "logsigmoid", "softsign", "tanhshrink", "softmax", "softmin", "log_softmax"]


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
    "softmax": [S(T(3, 4), dim=1), S(T(2, 3, 4), dim=0)],
    "softmin": [S(T(3, 4), dim=1)],
    "log_softmax": [S(T(3, 4), dim=1), S(T(2, 3, 4), dim=-1)],
}
