"""PyTorch's module path for the LayerNorm and GroupNorm (torch.nn.modules.normalization), so that
whole models pickled by either library load; the classes live in layers.py and are named here."""
from ._paths import publish
from .layers import (LayerNorm, GroupNorm)

__all__ = ["LayerNorm", "GroupNorm"]
publish(__name__, globals(), __all__)
