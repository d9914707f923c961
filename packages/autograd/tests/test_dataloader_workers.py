"""DataLoader with worker processes: same batches, shared memory, seeds, failures,
clean shutdown."""
import os
import signal
import time

import pytest

import ember
from ember.th import _shared
from ember.utils.data import DataLoader, Dataset, IterableDataset, TensorDataset, \
    get_worker_info


def gen(seed):
    g = ember.Generator()
    g.manual_seed(seed)
    return g


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


class Pids(Dataset):
    """Each sample: (index, the worker's pid, its id, seed, a random number)."""

    def __len__(self):
        return 12

    def __getitem__(self, i):
        info = get_worker_info()
        return {"i": i, "pid": os.getpid(), "id": info.id if info else -1,
                "seed": info.seed if info else -1, "r": ember.rand(1)}


class Failing(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        if i == 5:
            raise ValueError(f"bad sample {i}")
        return i


class Killer(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        if i == 5:
            os.kill(os.getpid(), signal.SIGKILL)
        return i


class Slow(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        time.sleep(3)
        return i


class Sharded(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = get_worker_info()
        start, step = (0, 1) if info is None else (info.id, info.num_workers)
        return iter(range(start, self.n, step))


@pytest.fixture
def no_leaks():
    before = set(_shared.segments())
    yield
    time.sleep(0.05)
    # segments this process owns (a dataset shared for spawn) live until it exits
    mine = set(_shared.segments(os.getpid()))
    assert set(_shared.segments()) - before - mine == set()


def test_two_workers_same_batches_as_main_process(no_leaks):
    ds = TensorDataset(ember.randn(50, 1, 4, 4), ember.arange(50))
    for kw in ({}, {"shuffle": True}, {"drop_last": True}):
        ref = list(DataLoader(ds, batch_size=8, generator=gen(3), **kw))
        got = list(DataLoader(ds, batch_size=8, num_workers=2, generator=gen(3), **kw))
        assert len(ref) == len(got)
        for (a, b), (c, d) in zip(ref, got):
            assert ember.equal(a, c) and ember.equal(b, d)
        # batches made in workers arrive through shared memory
        assert all(x.is_shared() and y.is_shared() for x, y in got)


def test_worker_info_seeds_and_init_fn(no_leaks):
    seen = []
    dl = DataLoader(Pids(), batch_size=2, num_workers=2, generator=gen(11),
                    worker_init_fn=lambda wid: ember.manual_seed(1000 + wid))
    out = list(dl)
    ids = [int(b["id"][0]) for b in out]
    assert ids == [0, 1] * 3  # tasks go round-robin
    seeds = {int(b["id"][0]): int(b["seed"][0]) for b in out}
    assert seeds[1] == seeds[0] + 1
    # worker_init_fn ran in the worker: its seed decides the random numbers
    first = out[0]["r"][0].item()
    g = ember.manual_seed(1000)
    assert first == ember.rand(1).item()
    # the same loader generator gives the same worker seeds
    again = list(DataLoader(Pids(), batch_size=2, num_workers=2, generator=gen(11)))
    assert {int(b["id"][0]): int(b["seed"][0]) for b in again} == seeds
    other = list(DataLoader(Pids(), batch_size=2, num_workers=2, generator=gen(12)))
    assert int(other[0]["seed"][0]) != seeds[0]
    del g, seen


def test_iterable_dataset_sharded_by_worker(no_leaks):
    got = sorted(sum((b.tolist() for b in DataLoader(Sharded(11), batch_size=2,
                                                     num_workers=2)), []))
    assert got == list(range(11))


@pytest.mark.parametrize("prefetch", [1, 4])
def test_prefetch_factor(prefetch, no_leaks):
    dl = DataLoader(list(range(20)), batch_size=3, num_workers=2, prefetch_factor=prefetch)
    assert sum((b.tolist() for b in dl), []) == list(range(20))


def test_persistent_workers_reuse_processes(no_leaks):
    dl = DataLoader(Pids(), batch_size=3, num_workers=2, persistent_workers=True)
    e1 = list(dl)
    pids1 = {int(p) for b in e1 for p in b["pid"]}
    e2 = list(dl)
    pids2 = {int(p) for b in e2 for p in b["pid"]}
    assert pids1 == pids2 and len(pids1) == 2
    assert [b["i"].tolist() for b in e1] == [b["i"].tolist() for b in e2]
    # an abandoned epoch does not leak into the next one
    it = iter(dl)
    next(it)
    assert [b["i"].tolist() for b in dl] == [b["i"].tolist() for b in e1]
    it._shutdown_workers()
    assert not any(alive(p) for p in pids1)


def test_worker_exception_reraised_with_traceback(no_leaks):
    dl = DataLoader(Failing(), batch_size=2, num_workers=2)
    with pytest.raises(ValueError) as e:
        list(dl)
    msg = str(e.value)
    assert "Caught ValueError in DataLoader worker process" in msg
    assert "Original Traceback" in msg and "bad sample 5" in msg and "__getitem__" in msg


def test_killed_worker_raises_instead_of_hanging(no_leaks):
    dl = DataLoader(Killer(), batch_size=2, num_workers=2)
    it = iter(dl)
    pids = list(it._worker_pids)
    with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid\(s\) \d+\) is killed by "
                                           r"signal: SIGKILL"):
        for _ in it:
            pass
    assert not any(alive(p) for p in pids)


def test_timeout(no_leaks):
    dl = DataLoader(Slow(), batch_size=1, num_workers=1, timeout=0.3)
    with pytest.raises(RuntimeError, match="DataLoader timed out after 0.3 seconds"):
        next(iter(dl))


def test_interrupted_loop_leaves_no_processes_or_segments(no_leaks):
    ds = TensorDataset(ember.randn(400, 64))
    it = iter(DataLoader(ds, batch_size=4, num_workers=2, prefetch_factor=8))
    pids = list(it._worker_pids)
    next(it)
    time.sleep(0.3)  # let the workers fill the queue with shared batches
    try:
        for i, _ in enumerate(it):
            if i == 2:
                raise KeyboardInterrupt
    except KeyboardInterrupt:
        pass
    del it
    assert not any(alive(p) for p in pids)
    for p in pids:
        assert _shared.segments(p) == []


def test_break_then_garbage_collect(no_leaks):
    dl = DataLoader(list(range(100)), batch_size=2, num_workers=2)
    for i, _ in enumerate(dl):
        if i == 3:
            break
    import gc
    gc.collect()


def test_spawn_context(no_leaks):
    ds = TensorDataset(ember.arange(12.).reshape(6, 2))
    got = list(DataLoader(ds, batch_size=4, num_workers=2, multiprocessing_context="spawn"))
    assert [b[0].shape[0] for b in got] == [4, 2] and got[1][0][1, 1].item() == 11.0
    assert ds.tensors[0].is_shared()  # sent to the spawned workers by sharing


KILLED_MAIN = r'''
import os, signal, sys
import ember
from ember.utils.data import DataLoader, TensorDataset
ds = TensorDataset(ember.randn(400, 256))
it = iter(DataLoader(ds, batch_size=4, num_workers=2, prefetch_factor=8))
next(it)
import time; time.sleep(0.5)   # the workers fill the queue with shared batches
print(" ".join(map(str, it._worker_pids)), flush=True)
os.kill(os.getpid(), signal.SIGKILL)
'''


def test_main_process_killed_workers_exit_and_clean_up():
    import subprocess
    import sys
    r = subprocess.run([sys.executable, "-c", KILLED_MAIN], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == -signal.SIGKILL, r.stderr
    pids = [int(p) for p in r.stdout.split()]
    assert len(pids) == 2
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and (any(alive(p) for p in pids) or
                                           any(_shared.segments(p) for p in pids)):
        time.sleep(0.05)
    assert not any(alive(p) for p in pids)
    assert all(_shared.segments(p) == [] for p in pids)


def test_persistent_workers_iterable_dataset_restarts_each_epoch(no_leaks):
    dl = DataLoader(Sharded(9), batch_size=2, num_workers=2, persistent_workers=True)
    epochs = [sorted(sum((b.tolist() for b in dl), [])) for _ in range(3)]
    assert epochs == [list(range(9))] * 3
    dl._iterator._shutdown_workers()


LIVE_AT_EXIT = r'''
from ember.utils.data import DataLoader
dl = DataLoader(list(range(10)), batch_size=2, num_workers=2, persistent_workers=True)
print(sum(len(b) for b in dl))
it = iter(DataLoader(list(range(10)), batch_size=2, num_workers=2))
next(it)   # an unfinished iterator, alive at exit
'''


def test_loaders_alive_at_interpreter_exit_shut_down_quietly():
    import subprocess
    import sys
    r = subprocess.run([sys.executable, "-c", LIVE_AT_EXIT], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == "10"
    assert "Exception ignored" not in r.stderr and "Traceback" not in r.stderr, r.stderr
