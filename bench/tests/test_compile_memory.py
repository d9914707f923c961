"""bench/compile_memory.py: each form runs in its own interpreter and its
peak is measured (no figure is asserted on beyond being one)."""
import os
import re
import sys

import pytest

BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, BENCH)

import compile_memory  # noqa: E402


@pytest.mark.skipif(not os.path.exists("/proc/self/clear_refs"), reason="needs Linux's /proc")
def test_table_has_a_measured_peak_per_form(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(compile_memory, "RUNS", 1)
    monkeypatch.setenv("EMBER_CACHE_DIR", str(tmp_path))
    compile_memory.main()
    rows = [line for line in capsys.readouterr().out.splitlines()
            if line.startswith("| ") and "MiB" not in line]
    assert [r.split("|")[1].strip() for r in rows] == list(compile_memory.WORKLOADS)
    for r in rows:
        eager, compiled = (float(v) for v in re.findall(r"\| ([0-9.]+) ", r)[:2])
        assert eager > 0 and compiled > 0
