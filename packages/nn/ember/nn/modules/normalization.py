"""PyTorch's module path for LayerNorm, GroupNorm and RMSNorm (torch.nn.modules.normalization), so that
whole models pickled by either library load; the classes live in layers.py and are named here."""
from ._paths import publish
from .layers import (LayerNorm, GroupNorm, RMSNorm)

__all__ = ["LayerNorm", "GroupNorm", "RMSNorm"]
publish(__name__, globals(), __all__)
