"""PyTorch's module path for the activation functions and MultiheadAttention
(torch.nn.modules.activation), so that whole models pickled by either library load; the classes
live in layers.py and attention.py and are named here."""
from ._paths import publish
from .attention import MultiheadAttention
from .layers import (CELU, ELU, GELU, GLU, Hardshrink, Hardsigmoid, Hardswish, Hardtanh,
                     LeakyReLU, LogSigmoid, LogSoftmax, Mish, PReLU, ReLU, ReLU6, SELU, SiLU,
                     Sigmoid, Softmax, Softmax2d, Softmin, Softplus, Softshrink, Softsign, Tanh,
                     Tanhshrink, Threshold)

__all__ = ["CELU", "ELU", "GELU", "Hardsigmoid", "Hardswish", "Hardtanh", "LeakyReLU",
           "LogSigmoid", "LogSoftmax", "Mish", "ReLU", "ReLU6", "SELU", "SiLU", "Sigmoid",
           "Softmax", "Softmin", "Softplus", "Softsign", "Tanh", "Tanhshrink", "Threshold",
           "MultiheadAttention", "GLU", "Hardshrink", "PReLU", "Softmax2d", "Softshrink"]
publish(__name__, globals(), __all__)
