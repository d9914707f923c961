"""ember.vision: datasets, transforms, models and image utilities for Ember,
with torchvision's names and semantics, plus the ``ember-vision train``
command.  Submodules load on first use."""
import importlib

__version__ = "0.1.0"
__all__ = ["datasets", "transforms", "models", "utils"]


def __getattr__(name):
    if name in __all__:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
