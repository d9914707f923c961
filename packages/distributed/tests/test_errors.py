import re
import subprocess
import sys
import time

import pytest

from conftest import RANKS, expect_ok, launch, mpiexec


def test_bad_arguments_raise_pytorch_errors():
    expect_ok(launch("errors.py", 2), 2)


@pytest.mark.parametrize("mode,nproc,expected", [
    # the others learn of the exception through the fault channel
    ("raise", 2, "ember.distributed.all_reduce: rank 1 failed: ValueError: boom on purpose"),
    ("raise", 4, "ember.distributed.all_reduce: rank 1 failed: ValueError: boom on purpose"),
    # a hung rank is named when the timeout expires
    ("hang", 2, "ember.distributed.all_reduce: timed out after"),
    # a rank that ends without the collective
    ("exit", 2, "rank 1 has exited"),
])
def test_a_failing_rank_is_named(mode, nproc, expected):
    start = time.monotonic()
    proc = launch("faults.py", nproc, mode, 3, timeout=60)
    assert proc.returncode != 0, proc.stdout
    assert expected in proc.stdout, proc.stdout
    assert "which it should not have" not in proc.stdout
    if mode == "hang":
        assert "rank 1 did not answer" in proc.stdout, proc.stdout
    assert time.monotonic() - start < 60


def test_a_killed_rank_ends_the_job():
    # mpiexec sees the death (well before the 30 s timeout) and ends the
    # other ranks with SIGKILL too; it then names one process that died by a
    # signal, by its PID -- the killed rank or, when it reaps the other first,
    # the one it ended itself (each rank prints its own PID)
    start = time.monotonic()
    proc = launch("faults.py", 2, "kill", 30, timeout=25)
    assert proc.returncode != 0, proc.stdout
    assert "Killed (signal 9)" in proc.stdout, proc.stdout
    pids = dict(re.findall(r"rank (\d) pid (\d+)", proc.stdout))
    assert sorted(pids) == ["0", "1"], proc.stdout
    named = re.search(r"PID (\d+) RUNNING", proc.stdout).group(1)
    assert named in pids.values(), proc.stdout
    assert "which it should not have" not in proc.stdout
    assert time.monotonic() - start < 25


def test_world_size_must_be_mpis():
    proc = launch("init_env.py", 2, env={"WORLD_SIZE": "3"})
    assert proc.returncode == 0, proc.stdout
    assert proc.stdout.count("ValueError: init_process_group: world_size 3 but MPI started 2 "
                             "processes") == 2, proc.stdout


def test_rank_from_the_environment_orders_the_group():
    # RANK reversed against MPI's order (mpiexec's per-process -env)
    script = str(RANKS / "init_env.py")
    cmd = [mpiexec(), "-n", "1", "-env", "RANK", "1", sys.executable, script, ":",
           "-n", "1", "-env", "RANK", "0", sys.executable, script]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stdout
    assert "rank 0 DONE order [(0, 1), (1, 0)]" in proc.stdout, proc.stdout
