"""ember.utils.data: datasets, samplers and the DataLoader (PyTorch's API)."""
from ._collate import default_collate, default_convert
from ._worker import WorkerInfo, get_worker_info
from .dataloader import DataLoader
from .dataset import (ChainDataset, ConcatDataset, Dataset, IterableDataset, Subset,
                      TensorDataset, random_split)
from .sampler import (BatchSampler, DistributedSampler, RandomSampler, Sampler,
                      SequentialSampler, SubsetRandomSampler, WeightedRandomSampler)

__all__ = ["DataLoader", "Dataset", "IterableDataset", "TensorDataset", "ConcatDataset",
           "ChainDataset", "Subset", "random_split", "Sampler", "SequentialSampler",
           "RandomSampler", "SubsetRandomSampler", "WeightedRandomSampler", "BatchSampler",
           "DistributedSampler", "default_collate", "default_convert", "get_worker_info",
           "WorkerInfo"]
