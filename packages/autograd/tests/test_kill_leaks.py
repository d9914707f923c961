"""What a SIGKILLed process leaves behind is cleaned up: its shared-memory
segments by the next Ember process's first shared-memory use, the temporary
file of a save it was writing by the next save to the same path.  Live
processes' segments and temporaries are never touched.  Real subprocesses,
each bounded by a timeout."""
import fcntl
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

import ember
from ember.th import _shared

SHM = _shared.SHM_DIR


def python(code):
    return [sys.executable, "-c", textwrap.dedent(code)]


def run(code, timeout=60):
    r = subprocess.run(python(code), capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, r.stderr
    return r.stdout


def dead_pid():
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait(30)
    return p.pid


def killed_sharer():
    """Name of the segment a process made with share_memory_ before it was
    SIGKILLed."""
    p = subprocess.Popen(python("""
        import os, signal, ember
        from ember.th import _shared
        t = ember.ones(1000).share_memory_()
        print(_shared.segments(os.getpid())[0], flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
    """), stdout=subprocess.PIPE, text=True)
    try:
        name = p.stdout.readline().strip()
        assert p.wait(30) == -signal.SIGKILL
    finally:
        p.kill()
        p.stdout.close()
    return name


NEXT_PROCESS = """
    import ember
    from ember.th import _shared
    _shared.reclaim_after_s = 0
    ember.zeros(3).share_memory_()   # the first shared-memory use reclaims
"""


def test_segment_of_killed_process_is_reclaimed_by_next_process():
    name = killed_sharer()
    pid = int(name.split("_")[1])
    try:
        assert name and os.path.exists(os.path.join(SHM, name))  # the leak
        assert os.path.exists(_shared._lock_path(pid))            # and its liveness file
        run(NEXT_PROCESS)
        assert not os.path.exists(os.path.join(SHM, name))
        assert not os.path.exists(_shared._lock_path(pid))
    finally:
        _shared.unlink(name)


def test_locked_liveness_file_protects_a_maker_whose_pid_is_not_visible():
    # a maker in another pid namespace sharing /dev/shm: its pid looks dead
    # here, but it holds the lock on its liveness file
    pid = dead_pid()
    lock = _shared._lock_path(pid)
    name = f"ember_{pid}_1_{os.getpid() % 0xffff}"
    path = os.path.join(SHM, name)
    p = subprocess.Popen(python(f"""
        import fcntl, os, sys
        fd = os.open({lock!r}, os.O_RDONLY | os.O_CREAT, 0o600)
        fcntl.flock(fd, fcntl.LOCK_SH)
        print("locked", flush=True)
        sys.stdin.readline()
    """), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    saved = _shared.reclaim_after_s
    try:
        assert p.stdout.readline().strip() == "locked"
        time.sleep(0.05)
        open(path, "wb").close()   # the segment, made after the lock
        _shared.reclaim_after_s = 0
        _shared.reclaim()
        assert os.path.exists(path) and os.path.exists(lock)
        p.communicate("\n", timeout=30)
        _shared.reclaim()          # the maker is gone now, its lock with it
        assert not os.path.exists(path) and not os.path.exists(lock)
    finally:
        _shared.reclaim_after_s = saved
        p.kill()
        _shared.unlink(name)
        if os.path.exists(lock):
            os.unlink(lock)


def test_segment_of_live_process_is_kept():
    p = subprocess.Popen(python("""
        import os, sys, ember
        from ember.th import _shared
        t = ember.arange(5.).share_memory_()
        print(_shared.segments(os.getpid())[0], flush=True)
        sys.stdin.readline()
        print(t.tolist(), flush=True)
    """), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        name = p.stdout.readline().strip()
        run(NEXT_PROCESS)
        assert os.path.exists(os.path.join(SHM, name))
        out, _ = p.communicate("\n", timeout=30)
        assert out.strip() == "[0.0, 1.0, 2.0, 3.0, 4.0]"
    finally:
        p.kill()


def test_unlocked_segment_named_after_a_dead_pid_is_reclaimed_only_when_old():
    # a segment without a lock (a transient one, or made by the C library)
    name = f"ember_{dead_pid()}_1_{os.getpid() % 0xffff}"
    path = os.path.join(SHM, name)
    open(path, "wb").close()
    try:
        saved = _shared.reclaim_after_s
        try:
            _shared.reclaim_after_s = 3600   # too young: may be on its way to a receiver
            assert _shared.reclaim() >= 0 and os.path.exists(path)
            _shared.reclaim_after_s = 0
            _shared.reclaim()
            assert not os.path.exists(path)
        finally:
            _shared.reclaim_after_s = saved
    finally:
        _shared.unlink(name)


def test_process_gone_sees_dead_and_reused_pids():
    assert _shared.process_gone(dead_pid(), time.time())
    assert not _shared.process_gone(os.getpid(), time.time())
    # this pid was alive at `since` only if this process started before then:
    # a file made a day before it started was made by an earlier holder of the pid
    assert _shared.process_gone(os.getpid(), time.time() - 86400 * 365)


# ---- ember.save's temporaries -------------------------------------------------------
def killed_saver(path):
    p = subprocess.Popen(python(f"""
        import os, signal, ember
        import ember.serialization as S
        def write_then_die(out, obj, protocol):
            out.write(b"partial")
            out.flush()
            print("writing", flush=True)
            os.kill(os.getpid(), signal.SIGKILL)
        S._write_archive = write_then_die
        ember.save({{"w": ember.ones(3)}}, {path!r})
    """), stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "writing"
        assert p.wait(30) == -signal.SIGKILL
    finally:
        p.kill()
        p.stdout.close()


def temporaries(folder):
    return sorted(f for f in os.listdir(folder) if f.endswith(".tmp"))


def test_killed_save_temporaries_removed_by_next_save(tmp_path):
    path = str(tmp_path / "ckpt.pt")
    ember.save({"v": 1}, path)
    killed_saver(path)
    first = temporaries(tmp_path)
    assert len(first) == 1 and first[0].startswith(".ckpt.pt.ember-save-")  # the leak
    killed_saver(path)   # a second killed save removes the first one's before it starts
    second = temporaries(tmp_path)
    assert len(second) == 1 and second != first
    assert ember.load(path) == {"v": 1}   # the previous checkpoint is intact
    # not ours to remove: another target's temporary, a file of another program
    other = tmp_path / f".other.pt.ember-save-{dead_pid()}-x.tmp"
    foreign = tmp_path / ".ckpt.pt.abc123.tmp"
    other.write_bytes(b"")
    foreign.write_bytes(b"")
    ember.save({"v": 2}, path)
    assert ember.load(path) == {"v": 2}
    assert temporaries(tmp_path) == sorted([other.name, foreign.name])


@pytest.mark.parametrize("locked", [True, False], ids=["writing", "before-locking"])
def test_live_writers_temporary_is_kept(tmp_path, locked):
    path = str(tmp_path / "ckpt.pt")
    # a writer in progress: a live process with its temporary, locked or not yet
    p = subprocess.Popen(python(f"""
        import fcntl, os, sys
        tmp = os.path.join({str(tmp_path)!r}, ".ckpt.pt.ember-save-%d-live.tmp" % os.getpid())
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT, 0o600)
        if {locked}:
            fcntl.flock(fd, fcntl.LOCK_EX)
        print(os.path.basename(tmp), flush=True)
        sys.stdin.readline()
    """), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        live = p.stdout.readline().strip()
        ember.save({"v": 3}, path)
        assert temporaries(tmp_path) == [live]
        p.communicate("\n", timeout=30)
        assert p.returncode == 0
        ember.save({"v": 4}, path)   # its writer is gone now (killed or not)
        assert temporaries(tmp_path) == []
        assert ember.load(path) == {"v": 4}
    finally:
        p.kill()
