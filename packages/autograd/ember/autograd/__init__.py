"""ember.autograd: reverse-mode automatic differentiation.

The graph is recorded as operations run (see ``graph``), and ``backward``
/ ``grad`` walk it back (see ``engine``).  Custom operations subclass
``Function``; ``gradcheck`` and ``gradgradcheck`` test gradients against
finite differences; ``detect_anomaly`` reports where in the forward pass a
failing backward came from.
"""
from . import functional, grad_mode, graph  # noqa: F401
from .anomaly_mode import detect_anomaly, is_anomaly_enabled, set_detect_anomaly
from .engine import backward, grad
from .function import Function, FunctionCtx, once_differentiable
from .grad_mode import (enable_grad, inference_mode, is_grad_enabled,
                        is_inference_mode_enabled, no_grad, set_grad_enabled)
from .gradcheck import GradcheckError, gradcheck, gradgradcheck
from .variable import Variable

__all__ = ["backward", "grad", "Function", "FunctionCtx", "once_differentiable", "no_grad",
           "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled", "detect_anomaly", "set_detect_anomaly",
           "is_anomaly_enabled", "gradcheck", "gradgradcheck", "GradcheckError", "Variable"]
