"""The benchmark harness itself: it runs end to end on tiny sizes, its table
has every row, and each library's results agree with NumPy's.

No time is asserted on: figures from a smoke run are meaningless.
"""
import json
import os
import subprocess
import sys

import pytest

BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, BENCH)

import timing  # noqa: E402
from workloads import all_cases  # noqa: E402


def _has(module):
    try:
        __import__(module)
        return True
    except Exception:  # noqa: BLE001
        return False


def test_interleaved_takes_every_sample_and_reports_errors():
    g = {"x": 0}
    stmts = {
        "a": timing.Stmt("x + 1", g),
        "b": timing.Stmt("x * 2", g),
        "bad": timing.Stmt("1 / x", g),
    }
    errors = {}
    out = timing.interleaved(stmts, rounds=3, min_sample_s=1e-4, errors=errors)
    assert set(out) == {"a", "b"}
    assert all(len(s.per_call_s) == 3 and s.number >= 1 for s in out.values())
    assert all(s.median_s > 0 for s in out.values())
    assert errors["bad"].startswith("ZeroDivisionError")


def test_case_names_are_unique_and_units_known():
    for scale in ("full", "smoke"):
        cases = all_cases(scale)
        names = [c.name for c in cases]
        assert len(names) == len(set(names))
        for c in cases:
            assert c.figure(1e-3) > 0


def test_smoke_run_end_to_end(tmp_path):
    out = tmp_path / "r.md"
    proc = subprocess.run(
        [sys.executable, os.path.join(BENCH, "run.py"), "--smoke", "--threads", "1,2",
         "--settle-ms", "0", "--out", str(out)],
        capture_output=True, text=True, timeout=600)
    # exit 3 would mean a library's result disagrees with NumPy's
    assert proc.returncode == 0, proc.stdout + proc.stderr
    md = out.read_text()
    assert md in proc.stdout
    assert "| workload | unit | threads | Ember | PyTorch | NumPy |" in md
    for c in all_cases("smoke"):
        for threads in (1, 2):
            assert f"| {c.name} | {c.unit} | {threads} |" in md
    assert "OPENBLAS_CORETYPE=" in md and "OPENBLAS_L2_SIZE=" in md
    data = json.loads(out.with_suffix(".json").read_text())
    assert [r["threads"] for r in data["runs"]] == [1, 2]
    want = {"numpy"} | {lib for lib, mod in (("ember", "ember.th"), ("torch", "torch")) if _has(mod)}
    for run in data["runs"]:
        for row in run["rows"]:
            assert not row["mismatch"], row
            # a library that is installed has a figure for every workload
            # (unless it reported why not)
            assert want <= set(row["libs"]) | set(row["errors"]), row["name"]
    if _has("ember.th"):
        # ember.th has every operation these workloads use: no row may lack it
        for run in data["runs"]:
            assert run["effective_threads"].get("ember") == run["threads"]
            for row in run["rows"]:
                assert "ember" in row["libs"], (row["name"], row["errors"])


def test_only_filters_and_list(tmp_path):
    proc = subprocess.run([sys.executable, os.path.join(BENCH, "run.py"), "--list", "--only", "matmul"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0
    names = [line for line in proc.stdout.splitlines() if line.strip()]
    assert names and all("matmul" in n for n in names)
    proc = subprocess.run([sys.executable, os.path.join(BENCH, "run.py"), "--only", "no-such-workload"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2


@pytest.mark.skipif(not _has("ember.th"), reason="ember.th is not installed")
def test_ember_thread_count_is_set_per_process():
    code = ("import sys; sys.path.insert(0, %r); import run; mods, notes = run.load_libs(2); "
            "th = mods['ember']; print(th.get_num_threads())" % BENCH)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "2"


def _busy_children():
    """pids of this process's children running the busy loop"""
    out = []
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open(f"/proc/{p}/stat") as f:
                ppid = int(f.read().split(")")[-1].split()[1])
            with open(f"/proc/{p}/cmdline", "rb") as f:
                cmd = f.read()
        except OSError:
            continue
        if ppid == os.getpid() and b"while True: pass" in cmd:
            out.append(int(p))
    return out


def test_busy_processes_run_during_the_block_and_are_stopped():
    import run

    with run.busy_processes(2):
        during = _busy_children()
    assert len(during) == 2
    assert _busy_children() == []
    with pytest.raises(ZeroDivisionError):
        with run.busy_processes(2):
            1 / 0
    assert _busy_children() == []
    load_cases = [c for c in all_cases("smoke") if c.family == "under load"]
    assert {c.busy for c in load_cases if "busy processes" in c.name} == {2}
