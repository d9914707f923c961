"""NumPy arrays, DLPack capsules and memoryviews of a tensor whose storage
share_memory_() (or a multiprocessing queue) moves to shared memory keep
the old memory alive: they never read freed memory.  Each case runs in a
subprocess, so that a crash fails the test instead of killing pytest."""
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import ember


def run_python(code, timeout=60):
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                       text=True, timeout=timeout)
    assert r.returncode == 0, f"exit status {r.returncode}\n{r.stdout}\n{r.stderr}"
    return r.stdout


def test_numpy_view_survives_share_memory_subprocess():
    out = run_python("""
        import warnings
        import numpy as np
        import ember
        warnings.simplefilter("ignore")
        x = ember.arange(10**6, dtype=ember.float64)
        a = x.numpy()
        m = memoryview(x.numpy())
        d = np.from_dlpack(x)
        x.share_memory_()
        junk = [ember.full((10**6,), 7.0, dtype=ember.float64) for _ in range(4)]
        expect = (10**6 - 1) * 10**6 / 2
        print(a.sum() == expect, np.asarray(m).sum() == expect, d.sum() == expect)
    """)
    assert out.split() == ["True", "True", "True"]


def test_numpy_view_after_queue_put_subprocess():
    # the queue moves t's storage to shared memory in its feeder thread
    out = run_python("""
        import warnings
        import ember, ember.multiprocessing as mp
        warnings.simplefilter("ignore")
        t = ember.arange(1000, dtype=ember.float64)
        a = t.numpy()
        q = mp.get_context("fork").Queue()
        q.put(t)
        r = q.get(timeout=30)
        junk = [ember.full((1000,), 7.0, dtype=ember.float64) for _ in range(50)]
        print(a.tolist() == list(range(1000)), r.tolist() == list(range(1000)),
              t.is_shared())
    """)
    assert out.split() == ["True", "True", "True"]


def test_old_views_keep_values_and_warn_new_views_follow():
    x = ember.arange(6, dtype=ember.float64)
    a = x.numpy()
    with pytest.warns(RuntimeWarning, match=r"1 NumPy array\(s\).*call \.numpy\(\) again"):
        x.share_memory_()
    x.add_(1)
    assert a.tolist() == [0, 1, 2, 3, 4, 5]  # the values at the move, still readable
    b = x.numpy()
    b[0] = 100
    assert x[0].item() == 100
    assert np.shares_memory(b, x.numpy())


def test_no_warning_without_views_and_old_memory_released():
    from ember.th import _convert
    x = ember.arange(6, dtype=ember.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x.share_memory_()
    y = ember.arange(6, dtype=ember.float64)
    a = y.numpy()
    with pytest.warns(RuntimeWarning):
        y.share_memory_()
    assert any(e.old_memory is not None for e in _convert._exports)
    del a
    import gc
    gc.collect()
    assert not any(e.tensor is y._data for e in _convert._exports)


def test_bfloat16_has_no_numpy_view():
    with pytest.raises(TypeError, match="Got unsupported ScalarType BFloat16"):
        np.asarray(ember.ones(2, dtype=ember.bfloat16))
