"""ember.utils.data.distributed: PyTorch's module path for DistributedSampler."""
from .sampler import DistributedSampler

__all__ = ["DistributedSampler"]
