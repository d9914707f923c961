"""The parallel runtime as programs use it: thread pool + worker processes.

Each scenario runs in its own Python process with a timeout, so that a
regression (a child blocked in a thread pool inherited from its parent)
fails here instead of hanging the suite."""
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

import ember
from test_dataloader_workers import alive  # a pid that is running, not a zombie

START_METHODS = ("fork", "spawn", "forkserver")


def run_script(body, timeout=120, args=(), env=None):
    """Runs body in a fresh interpreter.  libTH's look at the machine's load
    is off there (EMBER_LOAD_CHECK=0): these scripts need the pool to run
    wide (a parent whose workers exist when it forks), whatever else the
    test machine runs; the look itself is tested by libTH's C tests."""
    code = textwrap.dedent(body)
    r = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                       timeout=timeout,
                       env={**os.environ, "EMBER_LOAD_CHECK": "0", **(env or {})})
    assert r.returncode == 0, f"exit {r.returncode}\nstdout:\n{r.stdout}\nstderr:\n{r.stderr}"
    return r.stdout


# A parent that has run work on every kind of parallel region of the front
# and libTH first: element-wise, a reduction, and a product big enough for
# OpenBLAS's threads.  (libTHNN's kernels after a fork: ember-thnn's tests.)
WARM_PARENT = """
import ember
ember.set_num_threads(2)
x = ember.randn(512, 3, 32, 32)
y = (x * 2 + 1).relu()
m = ember.randn(512, 512) @ ember.randn(512, 512)
s = ember.randn(256, 1000).softmax(1).sum()
assert "regions run: 0 " not in ember.__config__.parallel_info()
"""


@pytest.mark.parametrize("method", START_METHODS)
def test_dataloader_workers_after_parallel_work(method):
    out = run_script(WARM_PARENT + f"""
from ember.utils.data import DataLoader, TensorDataset
ds = TensorDataset(ember.randn(64, 3, 32, 32), ember.arange(64))
n = 0
for xb, yb in DataLoader(ds, batch_size=8, num_workers=2, multiprocessing_context={method!r},
                         timeout=60):
    z = (xb * 2).sum() + yb.sum()
    n += xb.shape[0]
print(n)
""")
    assert out.split() == ["64"]


class ThreadCounts:
    """Samples report the worker's thread count and run a parallel op."""

    def __len__(self):
        return 4

    def __getitem__(self, i):
        x = ember.randn(400_000)
        return ember.get_num_threads(), float((x * 2 - x).sum() - x.sum())


def init_two_threads(worker_id):
    ember.set_num_threads(2)


SCRIPT_COUNTS = """
import sys
import ember
from ember.utils.data import DataLoader
sys.path.insert(0, {here!r})
from test_parallel_runtime import ThreadCounts, init_two_threads

ember.set_num_threads(2)
x = ember.randn(512, 3, 32, 32) * 3   # the parent's pool is started
for init_fn in (None, init_two_threads):
    counts = [int(c) for c, _ in DataLoader(ThreadCounts(), batch_size=None, num_workers=2,
                                           worker_init_fn=init_fn,
                                           multiprocessing_context={method!r}, timeout=60)]
    print(*counts)
print(ember.get_num_threads())
"""


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_worker_thread_count_defaults_to_one_and_can_be_set(method):
    here = os.path.dirname(__file__)
    out = run_script(SCRIPT_COUNTS.format(here=here, method=method)).splitlines()
    assert out == ["1 1 1 1", "2 2 2 2", "2"]


def test_worker_that_forks_again():
    out = run_script(WARM_PARENT + """
import os
from ember.utils.data import DataLoader, Dataset

class Forks(Dataset):
    def __len__(self):
        return 4
    def __getitem__(self, i):
        ember.set_num_threads(2)
        x = ember.randn(1_000_000) * 2       # this worker's own pool
        pid = os.fork()
        if pid == 0:                          # the grandchild uses it too
            y = (ember.randn(1_000_000) + 1).sum()
            os._exit(0 if bool(y == y) else 3)
        _, status = os.waitpid(pid, 0)
        return os.waitstatus_to_exitcode(status)

print(sum(DataLoader(Forks(), batch_size=None, num_workers=2, timeout=60)))
""")
    assert out.split() == ["0"]


def test_hogwild_after_parallel_work():
    out = run_script(WARM_PARENT + """
import ember.multiprocessing as mp

def loss_of(w, x):
    return ((x @ w - x.sum(1, keepdim=True)) ** 2).mean()

def train(w, seed, steps):
    # hogwild: both processes update the one shared weight in place
    ember.manual_seed(seed)
    for _ in range(steps):
        x = ember.randn(256, 64)
        w.grad = None
        loss_of(w, x).backward()
        with ember.no_grad():
            w -= 0.05 * w.grad

w = ember.zeros(64, 1).share_memory_().requires_grad_()
x = ember.randn(256, 64)
before = float(loss_of(w, x))
procs = [mp.get_context("fork").Process(target=train, args=(w, s, 40)) for s in (1, 2)]
for p in procs:
    p.start()
for p in procs:
    p.join(60)
    assert p.exitcode == 0, p.exitcode
after = float(loss_of(w, x))
print(after < before / 4)
""")
    assert out.split() == ["True"]


KILLED_MID_EPOCH = """
import os, signal, sys, time
import ember
from ember.utils.data import DataLoader, Dataset

class Busy(Dataset):
    '''Every sample keeps its worker busy for a long time (in C and in Python),
    so a worker never gets back to its queue to notice the parent is gone.'''
    def __len__(self):
        return 100
    def __getitem__(self, i):
        end = time.monotonic() + 600
        while time.monotonic() < end:
            (ember.randn(100_000) * 2).sum()
        return i

x = ember.randn(512, 3, 32, 32) * 2
it = iter(DataLoader(Busy(), batch_size=None, num_workers=2,
                     multiprocessing_context=sys.argv[1]))
time.sleep(1.0)   # the workers are inside __getitem__ now
print(" ".join(map(str, it._worker_pids)), flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


@pytest.mark.parametrize("method", START_METHODS)
def test_parent_killed_mid_epoch_leaves_no_worker(method):
    r = subprocess.run([sys.executable, "-c", KILLED_MID_EPOCH, method], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == -signal.SIGKILL, r.stderr
    pids = [int(p) for p in r.stdout.split()]
    assert len(pids) == 2
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(alive(p) for p in pids):
        time.sleep(0.05)
    left = [p for p in pids if alive(p)]
    for p in left:  # do not leave them behind if the test fails
        os.kill(p, signal.SIGKILL)
    assert left == []


def test_thread_counts_in_forked_child():
    out = run_script("""
import os, ember
ember.set_num_threads(2)
x = ember.randn(2_000_000) * 2                 # the parent's pool runs
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    ok = ember.get_num_threads() == 2          # the setting is inherited
    ember.set_num_threads(1)
    a = ember.randn(2_000_000)
    ok &= bool(((a * 2) == (a + a)).all())
    ember.set_num_threads(2)
    ok &= bool(((a * 2) == (a + a)).all())     # a fresh pool in the child
    info = ember.__config__.parallel_info()
    ok &= "workers started: 1" in info
    os.write(w, b"ok" if ok else b"bad")
    os._exit(0)
os.waitpid(pid, 0)
print(os.read(r, 16).decode(), ember.get_num_threads())
""", timeout=60)
    assert out.split() == ["ok", "2"]


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="needs Linux's /proc")
def test_one_thread_child_starts_no_thread():
    """A DataLoader worker (one intra-op thread) that indexes and copies
    starts no thread of its own: neither the pool's nor OpenBLAS's (which
    spin for a while after they start, taking a core from the training
    loop, as they did when every region set OpenBLAS's width)."""
    out = run_script(WARM_PARENT + """
import os
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    ember.set_num_threads(1)
    y = x[ember.tensor([3, 1, 4])] + 1
    z = ember.empty(64, 3, 32, 32).copy_(x[:64])
    s = x.sum()
    os.write(w, str(len(os.listdir("/proc/self/task"))).encode())
    os._exit(0)
os.waitpid(pid, 0)
print(os.read(r, 16).decode())
""", timeout=60)
    assert out.split() == ["1"], f"threads in the forked 1-thread child: {out}"


def test_threads_calling_ops_at_once_get_right_results():
    """Regions from two threads: one runs on the pool, the other serially."""
    import threading
    ember.set_num_threads(2)
    xs = [ember.randn(600_000, dtype=ember.float64) for _ in range(2)]
    want = [float((x * 3 + 1).sum()) for x in xs]
    got = [[], []]

    def work(i):
        for _ in range(20):
            got[i].append(float((xs[i] * 3 + 1).sum()))

    ts = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(60)
    for i in range(2):
        assert got[i] == pytest.approx([want[i]] * 20, rel=1e-12)


def test_same_results_on_one_and_two_threads():
    x = ember.randn(1_000_003, dtype=ember.float64)
    out = []
    for n in (1, 2):
        ember.set_num_threads(n)
        out.append(((x * 2).exp() - x).numpy())
    ember.set_num_threads(2)
    assert (out[0] == out[1]).all()


def test_parallel_info_and_interop_threads():
    out = run_script("""
import re, time, ember
ember.set_num_threads(2)
info = ember.__config__.parallel_info()
assert "ember.get_num_threads() : 2" in info, info
assert "thread pool" in info and "OpenBLAS" in info, info
x = ember.randn(2_000_000)
for _ in range(3):      # the pool looks at the machine's load every few ms
    x = x * 1.0
    time.sleep(0.005)
assert re.search(r"other runnable threads on the machine: \d+ \(of \d+ CPUs\)",
                 ember.__config__.parallel_info()), ember.__config__.parallel_info()
assert ember.get_num_interop_threads() >= 1
ember.set_num_interop_threads(3)
assert ember.get_num_interop_threads() == 3
try:
    ember.set_num_interop_threads(2)
except RuntimeError as e:
    assert "cannot set number of interop threads" in str(e)
else:
    raise AssertionError("a second set_num_interop_threads was accepted")
print("ok")
""", timeout=60, env={"EMBER_LOAD_CHECK": "1"})
    assert out.split() == ["ok"]


def test_thread_count_errors():
    with pytest.raises(ValueError, match="positive"):
        ember.set_num_threads(0)
    with pytest.raises(TypeError):
        ember.set_num_threads(1.5)
    with pytest.raises(RuntimeError, match="positive"):
        ember.set_num_interop_threads(0)
    assert ember.get_num_threads() >= 1
