"""bench/footprint.py: its figures are measured, and its gate fails when a
limit is passed (limits lowered here; no figure is asserted on)."""
import os
import sys

BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, BENCH)

import footprint  # noqa: E402


def test_sizes_come_from_installed_files():
    own = footprint.dist_size("ember-th")
    assert own > 100_000                      # libTH.so alone is larger
    assert footprint.dist_size("no-such-distribution") == 0
    assert {"numpy", "cffi"} <= footprint.requirements("ember-th")


def test_gate_passes_and_fails_on_its_limits(monkeypatch, capsys):
    assert footprint.main(["--gate", "--runs", "1", "--no-torch"]) == 0
    out = capsys.readouterr()
    assert "| Ember" in out.out and "within every limit" in out.err
    monkeypatch.setattr(footprint, "LIMIT_SIZE_MB", 0.001)
    monkeypatch.setattr(footprint, "LIMIT_RSS_MIB", 1.0)
    assert footprint.main(["--gate", "--runs", "1", "--no-torch"]) == 1
    err = capsys.readouterr().err
    assert "installed size" in err and "RSS after import" in err
