"""ember.nn.parallel.comm: ember.cuda.comm under the name PyTorch also
gives it (torch.nn.parallel.comm)."""
from ember.cuda.comm import broadcast, gather, reduce_add, scatter

__all__ = ["broadcast", "scatter", "gather", "reduce_add"]
