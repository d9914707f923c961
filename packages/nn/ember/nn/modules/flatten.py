"""PyTorch's module path for the Flatten and Unflatten (torch.nn.modules.flatten), so that whole
models pickled by either library load; the classes live in layers.py and are named here."""
from ._paths import publish
from .layers import (Flatten, Unflatten)

__all__ = ["Flatten", "Unflatten"]
publish(__name__, globals(), __all__)
