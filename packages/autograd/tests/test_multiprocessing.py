"""ember.multiprocessing: tensors shared between processes, fork and spawn; small
/dev/shm; the hogwild example."""
import os
import pickle
import warnings

import pytest

import ember
import ember.multiprocessing as mp
from ember.th import _shared
from ember.utils.data import DataLoader, TensorDataset

HERE = os.path.dirname(os.path.abspath(__file__))


def add_one(t):
    with ember.no_grad():
        t.add_(1)


def send_back(q, done):
    q.put({"a": ember.arange(4) * 10, "w": ember.ones(2, requires_grad=True)})
    done.wait(10)  # keep the sender alive until the receiver has the tensors


def check_grad_leaf(t, q):
    y = (t * 2).sum()
    y.backward()
    q.put((t.requires_grad, t.is_leaf, t.grad.tolist()))
    with ember.no_grad():
        t.mul_(3)


def test_share_memory_in_place_views_follow():
    t = ember.arange(6.).reshape(2, 3)
    v = t[1]
    assert not t.is_shared()
    assert t.share_memory_() is t
    assert t.is_shared() and v.is_shared()
    assert t.tolist() == [[0., 1., 2.], [3., 4., 5.]]
    v[0] = 30.
    assert t[1, 0].item() == 30.
    ptr = t.data_ptr()
    t.share_memory_()  # idempotent
    assert t.data_ptr() == ptr
    assert _shared.segments(os.getpid())


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_child_writes_are_seen(method):
    ctx = mp.get_context(method)
    t = ember.zeros(4).share_memory_()
    p = ctx.Process(target=add_one, args=(t[1:3],))
    p.start()
    p.join(30)
    assert p.exitcode == 0
    assert t.tolist() == [0., 1., 1., 0.]


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_queue_shares_storage_both_ways(method):
    ctx = mp.get_context(method)
    q, done = ctx.Queue(), ctx.Event()
    p = ctx.Process(target=send_back, args=(q, done))
    p.start()
    got = q.get(timeout=30)
    done.set()
    p.join(30)
    assert got["a"].tolist() == [0, 10, 20, 30] and got["a"].is_shared()
    assert got["w"].requires_grad and got["w"].is_leaf
    # the child's segments went away with it; the data stays mapped here
    assert _shared.segments(p.pid) == []
    assert got["a"].sum().item() == 60


def test_requires_grad_shares_data_not_graph():
    ctx = mp.get_context("fork")
    w = ember.ones(3, requires_grad=True).share_memory_()
    q = ctx.Queue()
    p = ctx.Process(target=check_grad_leaf, args=(w, q))
    p.start()
    requires_grad, is_leaf, grad = q.get(timeout=30)
    p.join(30)
    assert requires_grad and is_leaf and grad == [2., 2., 2.]
    assert w.grad is None  # the child's gradient stayed in the child
    assert w.tolist() == [3., 3., 3.]  # its in-place update is shared


def test_non_leaf_requiring_grad_refused():
    y = ember.ones(2, requires_grad=True) * 2
    q = mp.get_context("fork").Queue()
    with pytest.raises(RuntimeError, match="Cowardly refusing to serialize non-leaf tensor"):
        mp.reductions.reduce_tensor(y)
    q.close()


def test_plain_pickle_still_copies():
    t = ember.arange(3.).share_memory_()
    r = pickle.loads(pickle.dumps(t))
    assert not r.is_shared() and r.tolist() == [0., 1., 2.]


def test_sharing_strategy_api():
    assert mp.get_sharing_strategy() in mp.get_all_sharing_strategies()
    with pytest.raises(ValueError, match="not supported"):
        mp.set_sharing_strategy("file_descriptor")
    assert mp.Queue is not None and mp.Process is not None  # a drop-in for multiprocessing


# ---- /dev/shm too small ------------------------------------------------------
@pytest.fixture
def tiny_shm(monkeypatch):
    """Every new segment fails as when /dev/shm is full (a real ENOSPC from
    libTH: the request is larger than the file system)."""
    st = os.statvfs("/dev/shm")
    too_big = st.f_blocks * st.f_frsize + (1 << 30)
    monkeypatch.setattr(_shared, "_create_shm",
                        lambda n: _shared.lib.th_storage_new_shared(too_big))
    monkeypatch.setattr(_shared, "_warned", [])


def test_small_shm_clear_error_without_fallback(tiny_shm, monkeypatch):
    monkeypatch.setenv("EMBER_SHM_FALLBACK_DIR", "none")
    t = ember.ones(3)
    with pytest.raises(MemoryError, match=r"/dev/shm, is too small; enlarge it.*"
                                          r"EMBER_SHM_FALLBACK_DIR"):
        t.share_memory_()
    assert not t.is_shared() and t.tolist() == [1., 1., 1.]  # nothing corrupted


def test_small_shm_falls_back_to_files(tiny_shm, monkeypatch, tmp_path):
    monkeypatch.setenv("EMBER_SHM_FALLBACK_DIR", str(tmp_path))
    t = ember.zeros(4)
    with pytest.warns(RuntimeWarning, match="too small; sharing tensors through files"):
        t.share_memory_()
    assert t.is_shared()
    files = os.listdir(tmp_path)
    assert len(files) == 1 and files[0].startswith(f"ember_{os.getpid()}_")
    ctx = mp.get_context("spawn")
    p = ctx.Process(target=add_one, args=(t,))
    p.start()
    p.join(30)
    assert p.exitcode == 0 and t.tolist() == [1., 1., 1., 1.]
    _shared.unlink(str(tmp_path / files[0]))


def test_small_shm_dataloader_through_files(tiny_shm, monkeypatch, tmp_path):
    monkeypatch.setenv("EMBER_SHM_FALLBACK_DIR", str(tmp_path))
    ds = TensorDataset(ember.arange(20.).reshape(10, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        got = list(DataLoader(ds, batch_size=4, num_workers=2))
    assert ember.equal(ember.cat([b[0] for b in got]), ds.tensors[0])
    assert all(b[0].is_shared() for b in got)
    assert os.listdir(tmp_path) == []  # received files were removed


# ---- the example ---------------------------------------------------------------
def test_hogwild_example_lowers_the_loss():
    import importlib.util
    path = os.path.join(HERE, "..", "examples", "hogwild", "main.py")
    spec = importlib.util.spec_from_file_location("ember_example_hogwild", path)
    hogwild = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hogwild)
    before, after = hogwild.main(["--processes", "2", "--steps", "60"])
    assert after < 0.5 * before


class _Stale(dict):
    """A registry where every address looks like an old file-backed storage."""

    def get(self, key, default=None):
        return "/tmp/ember_stale_file"

    def pop(self, key, default=None):
        return "/tmp/ember_stale_file"


def test_stale_file_registry_entries_do_not_hide_segments(monkeypatch):
    monkeypatch.setattr(_shared, "_file_paths", _Stale())
    t = ember.ones(3).share_memory_()
    name = _shared.handle(t._data)[0]
    assert name.startswith("/ember_") and name in _shared._owned


def test_every_segment_of_this_process_is_owned():
    owned = {n.lstrip("/") for n in _shared._owned if n.startswith("/ember_")}
    assert set(_shared.segments(os.getpid())) <= owned  # all unlinked at exit


class MyParam(ember.Tensor):
    pass


def test_tensor_subclass_shared_through_queue():
    class Later(ember.Tensor):  # defined after ember.multiprocessing: registered itself
        pass
    assert Later in mp.reductions.ForkingPickler._extra_reducers
    mp.register_tensor_class(MyParam)
    p = ember.Tensor._make_subclass(MyParam, ember.zeros(3), True)
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    q.put(p)
    r = q.get(timeout=10)
    assert type(r) is MyParam and r.requires_grad and r.is_shared()
    with ember.no_grad():
        r.add_(2)
    assert p.tolist() == [2., 2., 2.]  # the same memory
