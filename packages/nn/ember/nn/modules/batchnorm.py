"""PyTorch's module path for the batch norms (torch.nn.modules.batchnorm), so that whole models
pickled by either library load; the classes live in layers.py and are named here."""
from ._paths import publish
from .layers import (BatchNorm1d, BatchNorm2d, BatchNorm3d)

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d"]
publish(__name__, globals(), __all__)
