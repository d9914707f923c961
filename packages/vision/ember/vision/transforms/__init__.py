"""ember.vision.transforms: image transforms for PIL images and ember tensors,
with torchvision's names and semantics.  The functional forms are in
``ember.vision.transforms.functional``."""
from . import functional
from .functional import InterpolationMode
from .transforms import *  # noqa: F401,F403
from .transforms import __all__ as _transform_names

__all__ = ["functional", "InterpolationMode"] + list(_transform_names)
