"""The seeded property-based fuzz of the front (fuzz_front.py) in a
subprocess: a crash (the process dies on a signal), a hang (the watchdog
fires, or the run outlives its timeout) or an exception of an unexpected
type fails the test, with the op that was running.  `tox -e fuzz` runs it;
elsewhere it skips without Hypothesis or ember.nn.  EMBER_FUZZ_EXAMPLES
sets the examples per op family (a longer run, same seed)."""
import os
import signal
import subprocess
import sys

import pytest

pytest.importorskip("hypothesis")
pytest.importorskip("ember.nn")

HERE = os.path.dirname(os.path.abspath(__file__))
FAMILIES = ["unary", "binary", "reduce", "view", "index", "nn", "spectral"]
EXAMPLES = int(os.environ.get("EMBER_FUZZ_EXAMPLES", "1000"))
TIMEOUT_S = 300   # per family: far above a normal run, the watchdog catches a single hang


def last_op(log):
    """The last tensor and op the log names (the one that was running)."""
    try:
        with open(log) as f:
            lines = [line.rstrip() for line in f if line.strip()]
    except OSError:
        return "(no log)"
    return "\n".join(lines[-2:])


def fuzz(family, log, examples=EXAMPLES, watchdog=30):
    """The failure of a fuzz run of one op family, as text; None if it passed."""
    cmd = [sys.executable, os.path.join(HERE, "fuzz_front.py"), "--families", family,
           "--examples", str(examples), "--seed", "20261127", "--log", log,
           "--watchdog", str(watchdog)]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return f"hang: past {TIMEOUT_S} s; last op:\n{last_op(log)}"
    if r.returncode < 0:
        return (f"crash: {signal.Signals(-r.returncode).name}; last op:\n{last_op(log)}\n"
                f"{r.stderr[-4000:]}")
    if "Timeout (" in r.stderr:
        return f"hang: the watchdog fired; last op:\n{last_op(log)}\n{r.stderr[-4000:]}"
    if r.returncode != 0 or "fuzz: no crash, hang or unexpected exception" not in r.stdout:
        return (f"exception: exit status {r.returncode}; last op:\n{last_op(log)}\n"
                f"{r.stdout[-2000:]}\n{r.stderr[-6000:]}")
    return None


@pytest.mark.parametrize("family", FAMILIES)
def test_fuzz_front(family, tmp_path):
    failure = fuzz(family, str(tmp_path / "fuzz.log"))
    assert failure is None, f"the fuzz of {family} ops found a {failure}"


@pytest.mark.parametrize("kind", ["crash", "hang", "error"])
def test_fuzz_harness_reports_failures(kind, tmp_path):
    failure = fuzz(f"inject-{kind}", str(tmp_path / "fuzz.log"), examples=10, watchdog=2)
    expected = {"crash": "crash: SIGSEGV", "hang": "hang: the watchdog fired",
                "error": "exception"}[kind]
    assert failure is not None and failure.startswith(expected), failure
    assert f"inject-{kind}" in failure
