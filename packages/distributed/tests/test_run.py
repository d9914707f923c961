import subprocess
import sys

from conftest import RANKS


def run(*args, timeout=120):
    return subprocess.run([sys.executable, "-m", "ember.distributed.run", *args],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=timeout)


def test_launcher_starts_ranks_with_their_environment():
    p = run("--nproc-per-node", "3", str(RANKS / "launched.py"), "a", "--b")
    assert p.returncode == 0, p.stdout
    for r in range(3):
        assert f"rank {r} of 3 args ['a', '--b'] sum [3.0, 3.0]" in p.stdout, p.stdout


def test_launcher_names_a_killed_rank():
    p = run("--nproc-per-node", "2", str(RANKS / "launched.py"), "kill", timeout=60)
    assert p.returncode != 0, p.stdout
    assert "ember.distributed.run: rank 1 (pid" in p.stdout, p.stdout
    assert "Killed (signal 9)" in p.stdout, p.stdout


def test_launcher_usage_errors():
    p = run("--nproc-per-node", "0", "x.py")
    assert p.returncode == 2 and "--nproc-per-node must be at least 1" in p.stdout
