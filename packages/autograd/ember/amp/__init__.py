"""ember.amp: automatic mixed precision, as torch.amp.

- ``ember.amp.autocast`` (also ``ember.autocast``): regions where matrix
  products run in float16/bfloat16 and precision-sensitive ops in float32,
  by the one table of :mod:`ember.amp.policy`;
- ``ember.amp.GradScaler``: scales the loss so that float16 gradients do
  not underflow, skips steps whose gradients overflowed and adapts the scale.
"""
from .autocast_mode import autocast, is_autocast_available  # noqa: F401
from .grad_scaler import GradScaler, OptState  # noqa: F401

__all__ = ["autocast", "GradScaler", "is_autocast_available"]
