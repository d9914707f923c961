"""ember.nn.parallel: DataParallel and the pieces under it (replicate,
scatter, parallel_apply, gather), and DistributedDataParallel (on
ember-distributed's process groups), as torch.nn.parallel offers them."""
from .data_parallel import DataParallel, data_parallel
from .distributed import DistributedDataParallel
from .parallel_apply import parallel_apply
from .replicate import replicate
from .scatter_gather import gather, scatter

__all__ = ["replicate", "scatter", "parallel_apply", "gather", "data_parallel", "DataParallel",
           "DistributedDataParallel"]
