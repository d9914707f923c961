"""PyTorch's module path for the Identity, Linear, Bilinear (torch.nn.modules.linear), so that
whole models pickled by either library load; the classes live in layers.py and are named here."""
from ._paths import publish
from .layers import Bilinear, Identity, Linear


class NonDynamicallyQuantizableLinear(Linear):
    """A Linear (PyTorch's MultiheadAttention.out_proj has this class)."""


__all__ = ["Identity", "Linear", "Bilinear", "NonDynamicallyQuantizableLinear"]
publish(__name__, globals(), __all__)
