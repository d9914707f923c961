"""Datasets: map-style, iterable, and their combinations."""
import bisect
import collections.abc
import itertools
import math
import warnings

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "ConcatDataset", "ChainDataset",
           "Subset", "random_split"]


class Dataset:
    """A map-style dataset: ``__getitem__(index)`` and usually ``__len__``."""

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """A dataset that is a stream: ``__iter__`` yields samples.  With worker
    processes each worker iterates its own copy; use
    ``ember.utils.data.get_worker_info()`` in ``__iter__`` to shard."""

    def __iter__(self):
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")

    def __add__(self, other):
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    """Samples are the i-th rows of the given tensors (equal first sizes)."""

    def __init__(self, *tensors):
        if not tensors:
            raise ValueError("TensorDataset needs at least one tensor")
        n = tensors[0].size(0)
        if any(t.size(0) != n for t in tensors):
            raise ValueError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].size(0)

    def __getitems__(self, indices):
        """Many samples at once: one indexing operation per tensor."""
        import ember
        idx = ember.tensor(indices, dtype=ember.int64)
        return Rows(tuple(t[idx] for t in self.tensors))


class Rows(collections.abc.Sequence):
    """A batch of samples kept as columns: behaves as the list of sample tuples
    (built on access) and lets default_collate take the columns as they are."""

    __slots__ = ("columns",)

    def __init__(self, columns):
        self.columns = columns

    def __len__(self):
        return self.columns[0].shape[0]

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        return tuple(c[i] for c in self.columns)


class ConcatDataset(Dataset):
    """The concatenation of map-style datasets."""

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise ValueError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = list(itertools.accumulate(len(d) for d in self.datasets))

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        if idx >= len(self):
            raise IndexError(f"index {idx} is out of range for a dataset of {len(self)}")
        i = bisect.bisect_right(self.cumulative_sizes, idx)
        start = self.cumulative_sizes[i - 1] if i > 0 else 0
        return self.datasets[i][idx - start]


class ChainDataset(IterableDataset):
    """Iterable datasets one after the other."""

    def __init__(self, datasets):
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise TypeError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self):
        return sum(len(d) for d in self.datasets)


class Subset(Dataset):
    """The samples of `dataset` at `indices`."""

    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices):
        if callable(getattr(self.dataset, "__getitems__", None)):
            return self.dataset.__getitems__([self.indices[i] for i in indices])
        return [self.dataset[self.indices[i]] for i in indices]

    def __len__(self):
        return len(self.indices)


def random_split(dataset, lengths, generator=None):
    """Splits dataset into non-overlapping random Subsets of the given lengths
    (counts, or fractions summing to 1)."""
    import ember
    n = len(dataset)
    lengths = list(lengths)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1 and \
            all(0 <= f <= 1 for f in lengths) and not all(isinstance(f, int) for f in lengths):
        counts = [int(math.floor(n * f)) for f in lengths]
        for i in range(n - sum(counts)):
            counts[i % len(counts)] += 1
        for i, c in enumerate(counts):
            if c == 0:
                warnings.warn(f"Length of split at index {i} is 0. This might result in an "
                              f"empty dataset.")
        lengths = counts
    if sum(lengths) != n:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    perm = ember.randperm(n, generator=generator).tolist()
    out, offset = [], 0
    for length in lengths:
        out.append(Subset(dataset, perm[offset:offset + length]))
        offset += length
    return out
