"""libTH's block cache (storage.c): a released storage of 64 KiB or more
is kept for the next one of its size.  Reused blocks must behave like fresh
ones: zeros are zeros, sizes are not mixed up, threads and forked children
allocate from it safely, and EMBER_CPU_CACHE_MB=0 turns it off."""
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import ember.th as th

BIG = 1 << 18  # float32 elements: 1 MiB, past the cache's 64 KiB minimum


def cache_line():
    return next(line.strip() for line in th.parallel_info().splitlines()
                if "block cache" in line)


def cache_is_on():
    """Sanitizer builds do not cache (a reused block would hide a
    use-after-free): there the reuse checks below hold nothing to check."""
    line = cache_line()
    if "off" in line:
        assert line == "block cache: off (sanitizer build)", line
        return False
    return True


def test_released_block_is_taken_by_the_next_storage_of_its_size():
    a = th.empty(BIG)
    where = a.data_ptr()
    a.fill_(7.0)
    del a
    z = th.zeros(BIG)
    assert z.data_ptr() == where or not cache_is_on()
    assert not np.any(z.numpy())  # zeros on a reused block are still zeros


def test_blocks_of_other_sizes_are_not_mixed_up():
    a, b = th.empty(BIG), th.empty(3 * BIG)
    pa, pb = a.data_ptr(), b.data_ptr()
    del a, b
    b2 = th.ones(3 * BIG)
    a2 = th.ones(BIG)
    assert (a2.data_ptr(), b2.data_ptr()) == (pa, pb) or not cache_is_on()
    assert float(a2.sum()) == BIG and float(b2.sum()) == 3 * BIG


def test_threads_allocate_and_release_at_once():
    errors = []

    def work(k):
        rng = np.random.default_rng(k)
        for i in range(150):
            n = BIG * (1 + (i + k) % 3)
            x = rng.uniform(-1, 1, n).astype(np.float32)
            t = th.tensor(x) * 2.0
            if not np.array_equal(t.numpy(), x * 2):
                errors.append((k, i))
    ts = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert errors == []


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_forked_child_allocates_from_its_copy():
    keep = [th.full((BIG,), float(i)) for i in range(4)]
    del keep[1:]  # the cache now holds blocks, as a parent usually does
    pid = os.fork()
    if pid == 0:
        ok = True
        for i in range(20):
            t = th.full((BIG,), float(i))
            ok &= float(t.sum()) == float(i) * BIG
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    assert float(keep[0].sum()) == 0.0


@pytest.mark.parametrize("setting", ["0", "1", "not a number"])
def test_budget_from_the_environment(setting):
    """0 (or a value that is not a number) turns the cache off; 1 MiB
    keeps one block of this size.  Either way results are right."""
    code = (
        "import ember.th as th\n"
        f"for i in range(30):\n"
        f"    t = th.full(({BIG},), float(i)) + 1.0\n"
        f"    assert float(t.sum()) == (i + 1.0) * {BIG}, i\n"
        "print([l.strip() for l in th.parallel_info().splitlines() if 'block cache' in l][0])\n"
    )
    env = dict(os.environ, EMBER_CPU_CACHE_MB=setting)
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    if cache_is_on():
        want = ("block cache: 1024 KiB held of 1024 KiB (EMBER_CPU_CACHE_MB)"
                if setting == "1" else "block cache: off (EMBER_CPU_CACHE_MB)")
        assert r.stdout.strip() == want


def test_a_larger_block_serves_a_smaller_storage_and_returns_whole():
    big, small = 7 * BIG + 13, 4 * BIG + 5  # sizes no other test leaves cached
    a = th.empty(big)
    where = a.data_ptr()
    del a
    b = th.ones(small)  # up to twice the size: the larger block serves it
    assert b.data_ptr() == where or not cache_is_on()
    assert float(b.sum()) == small
    del b
    c = th.full((big,), 2.0)  # the block went back with its own size
    assert c.data_ptr() == where or not cache_is_on()
    assert float(c.sum()) == 2.0 * big
    del c
    d = th.empty(3 * BIG)  # under half its size: too small to take it
    assert d.data_ptr() != where or not cache_is_on()
