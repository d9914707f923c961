"""ember.utils.data in the main process: datasets, samplers, collate, DataLoader."""
import collections

import numpy as np
import pytest

import ember
from ember.utils.data import (BatchSampler, ChainDataset, ConcatDataset, DataLoader, Dataset,
                              DistributedSampler, IterableDataset, RandomSampler,
                              SequentialSampler, Subset, SubsetRandomSampler, TensorDataset,
                              WeightedRandomSampler, default_collate, get_worker_info,
                              random_split)


def gen(seed):
    g = ember.Generator()
    g.manual_seed(seed)
    return g


class Squares(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if not 0 <= i < self.n:
            raise IndexError(i)
        return i * i


class Stream(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter(range(self.n))

    def __len__(self):
        return self.n


# ---- datasets ----------------------------------------------------------------
def test_tensor_dataset():
    x, y = ember.randn(5, 3), ember.arange(5)
    ds = TensorDataset(x, y)
    assert len(ds) == 5
    a, b = ds[2]
    assert ember.equal(a, x[2]) and b.item() == 2
    with pytest.raises(ValueError, match="Size mismatch"):
        TensorDataset(x, ember.arange(4))


def test_concat_and_subset_and_chain():
    c = ConcatDataset([Squares(3), Squares(2)])
    assert len(c) == 5 and [c[i] for i in range(5)] == [0, 1, 4, 0, 1] and c[-1] == 1
    assert c.cumulative_sizes == [3, 5]
    with pytest.raises(IndexError):
        c[5]
    assert len(Squares(2) + Squares(3)) == 5
    with pytest.raises(ValueError, match="empty"):
        ConcatDataset([])
    with pytest.raises(ValueError, match="IterableDataset"):
        ConcatDataset([Stream(2)])
    s = Subset(Squares(10), [9, 1, 3])
    assert len(s) == 3 and [s[i] for i in range(3)] == [81, 1, 9]
    assert list(ChainDataset([Stream(2), Stream(3)])) == [0, 1, 0, 1, 2]
    assert list(Stream(2) + Stream(1)) == [0, 1, 0]


def test_random_split():
    parts = random_split(Squares(10), [3, 7], generator=gen(1))
    idx = sorted(parts[0].indices + parts[1].indices)
    assert idx == list(range(10)) and [len(p) for p in parts] == [3, 7]
    again = random_split(Squares(10), [3, 7], generator=gen(1))
    assert again[0].indices == parts[0].indices
    fr = random_split(Squares(10), [0.5, 0.3, 0.2], generator=gen(2))
    assert [len(p) for p in fr] == [5, 3, 2]
    with pytest.raises(ValueError, match="Sum of input lengths"):
        random_split(Squares(10), [3, 3])


# ---- samplers ----------------------------------------------------------------
def test_sequential_and_random_sampler():
    assert list(SequentialSampler(range(4))) == [0, 1, 2, 3]
    s = list(RandomSampler(range(10), generator=gen(0)))
    assert sorted(s) == list(range(10))
    assert s == list(RandomSampler(range(10), generator=gen(0)))
    r = list(RandomSampler(range(3), replacement=True, num_samples=50, generator=gen(0)))
    assert len(r) == 50 and set(r) <= {0, 1, 2}
    r = list(RandomSampler(range(4), num_samples=10, generator=gen(0)))
    assert len(r) == 10 and sorted(r[:4]) == [0, 1, 2, 3]
    assert len(RandomSampler(range(4), num_samples=10)) == 10
    with pytest.raises(ValueError, match="num_samples should be a positive integer"):
        RandomSampler(range(4), num_samples=0)
    with pytest.raises(TypeError, match="replacement should be a boolean"):
        RandomSampler(range(4), replacement=1)


def test_subset_random_and_weighted_sampler():
    s = list(SubsetRandomSampler([5, 7, 9], generator=gen(3)))
    assert sorted(s) == [5, 7, 9]
    w = list(WeightedRandomSampler([0.0, 1.0, 0.0, 3.0], 200, generator=gen(0)))
    assert len(w) == 200 and set(w) == {1, 3} and w.count(3) > w.count(1)
    nr = list(WeightedRandomSampler([1, 1, 1], 3, replacement=False, generator=gen(0)))
    assert sorted(nr) == [0, 1, 2]
    with pytest.raises(ValueError, match="num_samples"):
        WeightedRandomSampler([1.0], -1)
    with pytest.raises(ValueError, match="1d sequence"):
        WeightedRandomSampler([[1.0]], 1)


def test_batch_sampler():
    assert list(BatchSampler(range(5), 2, False)) == [[0, 1], [2, 3], [4]]
    assert list(BatchSampler(range(5), 2, True)) == [[0, 1], [2, 3]]
    assert len(BatchSampler(range(5), 2, False)) == 3 and len(BatchSampler(range(5), 2, True)) == 2
    with pytest.raises(ValueError, match="batch_size should be a positive integer"):
        BatchSampler(range(5), 0, False)


def test_distributed_sampler_shards():
    shards = [list(DistributedSampler(range(10), num_replicas=3, rank=r, shuffle=False))
              for r in range(3)]
    assert shards == [[0, 3, 6, 9], [1, 4, 7, 0], [2, 5, 8, 1]]
    dl = [list(DistributedSampler(range(10), 3, r, shuffle=False, drop_last=True))
          for r in range(3)]
    assert dl == [[0, 3, 6], [1, 4, 7], [2, 5, 8]]
    a = DistributedSampler(range(10), 2, 0, seed=5)
    b = DistributedSampler(range(10), 2, 1, seed=5)
    ia, ib = list(a), list(b)
    assert sorted(ia + ib) == list(range(10)) and len(a) == 5
    a.set_epoch(1)
    b.set_epoch(1)
    a2 = DistributedSampler(range(10), 2, 0, seed=5)
    a2.set_epoch(1)
    assert list(a) == list(a2)  # deterministic per (seed, epoch)
    big0, big1 = DistributedSampler(range(100), 2, 0), DistributedSampler(range(100), 2, 0)
    big1.set_epoch(1)
    assert list(big0) != list(big1)  # reshuffled per epoch
    assert sorted(list(a) + list(b)) == list(range(10))
    with pytest.raises(ValueError, match="Invalid rank"):
        DistributedSampler(range(4), 2, 2)


# ---- collate ------------------------------------------------------------------
Point = collections.namedtuple("Point", "x y")


def test_default_collate_recursive():
    batch = [{"img": ember.ones(2, 2) * i, "arr": np.full(3, i, np.float32), "label": i,
              "w": 0.5 * i, "flag": bool(i), "name": f"s{i}", "pt": Point(i, [i, -i]),
              "pair": (ember.tensor(i), np.int64(i))} for i in range(3)]
    out = default_collate(batch)
    assert out["img"].shape == (3, 2, 2) and out["img"][2, 0, 0].item() == 2
    assert out["arr"].dtype is ember.float32 and out["arr"].shape == (3, 3)
    assert out["label"].dtype is ember.int64 and out["label"].tolist() == [0, 1, 2]
    assert out["w"].dtype is ember.float64
    assert out["flag"].dtype is ember.bool
    assert out["name"] == ["s0", "s1", "s2"]
    assert isinstance(out["pt"], Point) and out["pt"].x.tolist() == [0, 1, 2]
    assert [t.tolist() for t in out["pt"].y] == [[0, 1, 2], [0, -1, -2]]
    assert isinstance(out["pair"], list) and out["pair"][1].tolist() == [0, 1, 2]
    with pytest.raises(RuntimeError, match="equal size"):
        default_collate([[1, 2], [1]])
    with pytest.raises(TypeError, match="default_collate"):
        default_collate([object(), object()])


# ---- DataLoader ---------------------------------------------------------------
def test_loader_batches_and_len():
    ds = TensorDataset(ember.arange(10.).reshape(10, 1), ember.arange(10))
    dl = DataLoader(ds, batch_size=4)
    batches = list(dl)
    assert len(dl) == 3
    assert [b[1].tolist() for b in batches] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert batches[0][0].shape == (4, 1)
    assert len(DataLoader(ds, batch_size=4, drop_last=True)) == 2
    assert [b[1].tolist() for b in DataLoader(ds, batch_size=4, drop_last=True)][-1] == \
        [4, 5, 6, 7]


def test_loader_shuffle_generator_reproducible():
    ds = Squares(20)
    a = [b.tolist() for b in DataLoader(ds, batch_size=5, shuffle=True, generator=gen(7))]
    b = [b.tolist() for b in DataLoader(ds, batch_size=5, shuffle=True, generator=gen(7))]
    assert a == b and sorted(sum(a, [])) == sorted(i * i for i in range(20))
    assert a != [[i * i for i in range(k, k + 5)] for k in range(0, 20, 5)]


def test_loader_sampler_batch_sampler_collate_fn_and_no_batching():
    ds = Squares(6)
    dl = DataLoader(ds, sampler=[5, 0, 3], batch_size=2)
    assert [b.tolist() for b in dl] == [[25, 0], [9]]
    dl = DataLoader(ds, batch_sampler=[[1, 2], [5]])
    assert [b.tolist() for b in dl] == [[1, 4], [25]] and len(dl) == 2
    dl = DataLoader(ds, batch_size=4, collate_fn=lambda items: sum(items))
    assert list(dl) == [14, 41]
    dl = DataLoader(ds, batch_size=None)
    assert list(dl) == [0, 1, 4, 9, 16, 25] and len(dl) == 6


def test_loader_iterable_dataset():
    dl = DataLoader(Stream(7), batch_size=3)
    assert [b.tolist() for b in dl] == [[0, 1, 2], [3, 4, 5], [6]] and len(dl) == 3
    assert len(DataLoader(Stream(7), batch_size=3, drop_last=True)) == 2
    assert [b.tolist() for b in DataLoader(Stream(7), batch_size=3, drop_last=True)] == \
        [[0, 1, 2], [3, 4, 5]]
    with pytest.raises(ValueError, match="shuffle"):
        DataLoader(Stream(3), shuffle=True)


def test_loader_argument_errors():
    ds = Squares(4)
    with pytest.raises(ValueError, match="mutually exclusive with shuffle"):
        DataLoader(ds, sampler=[0], shuffle=True)
    with pytest.raises(ValueError, match="batch_sampler option is mutually exclusive"):
        DataLoader(ds, batch_sampler=[[0]], batch_size=2)
    with pytest.raises(ValueError, match="num_workers"):
        DataLoader(ds, num_workers=-1)
    with pytest.raises(ValueError, match="prefetch_factor"):
        DataLoader(ds, prefetch_factor=2)
    with pytest.raises(ValueError, match="persistent_workers"):
        DataLoader(ds, persistent_workers=True)
    with pytest.raises(ValueError, match="timeout"):
        DataLoader(ds, timeout=-1)
    with pytest.raises(IndexError):
        list(DataLoader(ds, sampler=[9]))


def test_get_worker_info_in_main_process():
    assert get_worker_info() is None


def test_ember_utils_lazy_attribute():
    import ember.utils.data as d
    assert ember.utils.data is d


def test_tensor_dataset_batched_fetch_and_custom_collate():
    x, y = ember.randn(10, 3), ember.arange(10)
    ds = TensorDataset(x, y)
    seen = []

    def collate(samples):
        seen.append(len(samples))
        xs = ember.stack([s[0] for s in samples])
        return xs, [int(s[1]) for s in samples]
    out = list(DataLoader(ds, batch_size=4, collate_fn=collate))
    assert seen == [4, 4, 2] and out[2][1] == [8, 9]
    assert ember.equal(out[0][0], x[:4])
    sub = Subset(ds, [7, 2, 5])
    (bx, by), = list(DataLoader(sub, batch_size=3))
    assert by.tolist() == [7, 2, 5] and ember.equal(bx, x[[7, 2, 5]])
    w = ember.randn(4, 2, requires_grad=True)
    (bw,), = list(DataLoader(TensorDataset(w), batch_size=4))
    assert not bw.requires_grad and ember.equal(bw, w.detach())


def test_default_collate_non_contiguous_and_mixed_dtypes():
    base = ember.arange(12.).reshape(3, 4)
    cols = [base[:, i] for i in range(4)]  # non-contiguous
    out = default_collate(cols)
    assert ember.equal(out, base.t())
    with pytest.raises(RuntimeError):
        default_collate([ember.zeros(2), ember.zeros(3)])


def test_pin_memory_without_cuda_warns():
    if ember.cuda.is_available():
        pytest.skip("a CUDA backend is present")
    with pytest.warns(UserWarning, match="pin_memory"):
        dl = DataLoader(Squares(3), pin_memory=True)
    assert [b.tolist() for b in dl] == [[0], [1], [4]]


def _structure(x, lib):
    """A comparable description: type names, dtypes, shapes and values."""
    if isinstance(x, lib.Tensor):
        return ("tensor", str(x.dtype).split(".")[-1], tuple(x.shape), x.tolist())
    if isinstance(x, dict):
        return ("dict", {k: _structure(v, lib) for k, v in x.items()})
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return (type(x).__name__, [_structure(v, lib) for v in x])
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, [_structure(v, lib) for v in x])
    return ("value", x)


def test_default_collate_matches_pytorch():
    torch = pytest.importorskip("torch")
    from torch.utils.data import default_collate as torch_collate

    def samples(lib):
        return [{"x": lib.arange(4, dtype=lib.float32).reshape(2, 2) + i,
                 "np": np.arange(3, dtype=np.int32) * i, "label": i, "w": i / 2,
                 "ok": i % 2 == 0, "name": f"n{i}", "pt": Point(i, (i, -i)),
                 "seq": [i, i + 1]} for i in range(3)]
    assert _structure(default_collate(samples(ember)), ember) == \
        _structure(torch_collate(samples(torch)), torch)
