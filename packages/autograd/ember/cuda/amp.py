"""ember.cuda.amp: PyTorch's older CUDA-only spellings of ember.amp
(deprecated there, with a FutureWarning; they keep working here too)."""
import warnings

from .. import amp as _amp
from .._dtypes import float16

__all__ = ["autocast", "GradScaler"]


class autocast(_amp.autocast):
    """ember.amp.autocast('cuda', ...) with the older signature."""

    def __init__(self, enabled=True, dtype=float16, cache_enabled=True):
        warnings.warn("`ember.cuda.amp.autocast(args...)` is deprecated. Please use "
                      "`ember.amp.autocast('cuda', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class GradScaler(_amp.GradScaler):
    """ember.amp.GradScaler('cuda', ...) with the older signature."""

    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        warnings.warn("`ember.cuda.amp.GradScaler(args...)` is deprecated. Please use "
                      "`ember.amp.GradScaler('cuda', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__("cuda", init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval,
                         enabled=enabled)
