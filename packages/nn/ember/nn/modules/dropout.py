"""PyTorch's module path for the dropouts (torch.nn.modules.dropout), so that whole models pickled
by either library load; the classes live in layers.py and are named here."""
from ._paths import publish
from .layers import (Dropout, Dropout1d, Dropout2d, Dropout3d)

__all__ = ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d"]
publish(__name__, globals(), __all__)
