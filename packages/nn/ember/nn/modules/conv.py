"""PyTorch's module path for the convolutions (torch.nn.modules.conv), so that whole models pickled
by either library load; the classes live in layers.py and are named here."""
from ._paths import publish
from .layers import (Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"]
publish(__name__, globals(), __all__)
