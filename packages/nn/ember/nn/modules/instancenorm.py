"""PyTorch's module path for the instance norms (torch.nn.modules.instancenorm), so that whole
models pickled by either library load; the classes live in layers.py and are named here."""
from ._paths import publish
from .layers import (InstanceNorm1d, InstanceNorm2d, InstanceNorm3d)

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"]
publish(__name__, globals(), __all__)
