"""Launching rank programs (tests/ranks/*.py) through the mpich wheel's
mpiexec, bounded by a timeout so that a hang fails the test."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

RANKS = Path(__file__).parent / "ranks"


def mpiexec():
    exe = Path(sys.executable).parent / "mpiexec"
    return str(exe) if exe.exists() else shutil.which("mpiexec")


def launch(script, nproc, *args, timeout=120, env=None):
    """Runs ranks/<script> on nproc ranks; returns the CompletedProcess
    (output in .stdout, stderr merged)."""
    # one thread per rank: the ranks share the cores
    e = dict(os.environ, PYTHONUNBUFFERED="1", OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    e.update(env or {})
    cmd = [mpiexec(), "-n", str(nproc), sys.executable, str(RANKS / script), *map(str, args)]
    try:
        return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              timeout=timeout, env=e)
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"{script} on {nproc} ranks did not finish within {timeout} s:\n"
                    f"{exc.stdout}")


def expect_ok(proc, nproc, marker="DONE"):
    assert proc.returncode == 0, proc.stdout
    for r in range(nproc):
        assert f"rank {r} {marker}" in proc.stdout, proc.stdout
