"""bench/gpu.py, the GPU benchmark, end to end on tiny sizes (--smoke): on
the emulated device of a host-only ember-thc (EMBER_THC_EMULATE=1, no GPU
needed), or on a GPU where ember-thc has one.  It checks the harness (its
table, its result checks, its exit status), not speed: no time is asserted
on.  Each run takes a few seconds on the emulated device.
"""
import json
import os
import subprocess
import sys

import pytest

BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GPU = os.path.join(BENCH, "gpu.py")
sys.path.insert(0, BENCH)

import gpu  # noqa: E402

# libTHC reads EMBER_THC_EMULATE when it loads: so the runs, and the probe
# below, are subprocesses.  A CUDA build of libTHC ignores the variable.
ENV = dict(os.environ, EMBER_THC_EMULATE="1")
HEADER = "| workload | unit | Ember | PyTorch | ratio | target | met? |"


def _probe():
    """(device, emulated, reason): whether ember.thc has a device with
    EMBER_THC_EMULATE=1 (and the ember front sees it), and if not why not."""
    code = ("import ember.thc as t, ember.cuda as c\n"
            "n = t.device_count()\n"
            "print(n, int(n > 0 and t.is_emulated()), int(c.is_available()))")
    proc = subprocess.run([sys.executable, "-c", code], env=ENV, capture_output=True,
                          text=True, timeout=120)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["?"])[-1]
        return False, False, f"ember.thc (or the ember front) is not importable: {last}"
    n, emulated, front = (int(x) for x in proc.stdout.split())
    if n == 0:
        return False, False, "ember.thc has no device, not even the emulated one (a CUDA build without a GPU)"
    if not front:
        return False, bool(emulated), "ember.thc has a device but ember.cuda.is_available() is False"
    return True, bool(emulated), ""


DEVICE, EMULATED, REASON = _probe()
needs_device = pytest.mark.skipif(not DEVICE, reason=REASON or "no device")


def _has_torch():
    import importlib.util
    return importlib.util.find_spec("torch") is not None


def _run(*args, timeout=300):
    return subprocess.run([sys.executable, GPU, *args], env=ENV, capture_output=True,
                          text=True, timeout=timeout)


@pytest.mark.skipif(DEVICE and not EMULATED, reason="a real GPU is here: a run without "
                    "--smoke would benchmark it")
def test_without_a_gpu_it_says_so_in_one_line_and_exits_0():
    proc = _run("--quick", "--no-save", timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 1 and "no GPU to benchmark on" in lines[0], proc.stdout
    assert HEADER not in proc.stdout
    # for device checks: the same is a failure with --require-gpu
    assert _run("--quick", "--no-save", "--require-gpu", timeout=120).returncode == 1


def test_list_and_only():
    proc = _run("--list", "--only", "matmul", timeout=60)
    assert proc.returncode == 0, proc.stderr
    keys = [line.split()[0] for line in proc.stdout.splitlines() if line.strip()]
    assert keys == ["matmul-f32", "matmul-bf16"]
    assert _run("--only", "no-such-workload", timeout=60).returncode == 2


def test_check_flags_a_wrong_result():
    import numpy as np

    case = gpu.cases("smoke")[2]  # matmul float32
    ref = np.arange(6.0).reshape(2, 3)
    works = {"torch": gpu.Work("", {}, ref), "ember": gpu.Work("", {}, ref * (1 + 1e-7))}
    assert gpu.check(case, works, "torch", "PyTorch", ref) == {}
    works["ember"].check = ref + 1.0
    assert "differs from PyTorch's" in gpu.check(case, works, "torch", "PyTorch", ref)["ember"]
    works["ember"].check = ref.T
    assert "shape" in gpu.check(case, works, "torch", "PyTorch", ref)["ember"]
    # bfloat16 rounding of the NumPy reference: 8 significant bits, ties to even
    x = np.array([1.0, 1 + 2 ** -8, 1 + 3 * 2 ** -8, 1 + 2 ** -9, -3.14159], dtype=np.float32)
    assert gpu._bf16_round(x).tolist() == [1.0, 1.0, 1 + 2 ** -6, 1.0, -3.140625]


def _smoke(tmp_path, *extra):
    out = tmp_path / "gpu.md"
    proc = _run("--smoke", "--out", str(out), *extra)
    # 3 would mean a result differs from the reference, 1 that a workload failed
    assert proc.returncode == 0, proc.stdout + proc.stderr
    md = out.read_text()
    assert md in proc.stdout and HEADER in md
    assert "smoke run" in md and "Not comparable" not in md
    for case in gpu.cases("smoke"):
        assert f"| {case.name} | {case.unit} |" in md, case.name
    assert "| add GB/s / device copy GB/s" in md
    data = json.loads(out.with_suffix(".json").read_text())
    assert [r["key"] for r in data["rows"]] == [c.key for c in gpu.cases("smoke")]
    for row in data["rows"]:
        assert not row["errors"] and not row["mismatch"], row
        # Ember has a figure for every workload it has a form of (ResNet-18
        # needs ember.vision), checked against a reference where there is one
        assert "ember" in row["libs"] or "ember" in row["unsupported"], row["name"]
        for fig in row["libs"].values():
            assert fig["figure"] > 0 and len(fig["samples_s"]) == data["rounds"]
    return md, data


@needs_device
def test_smoke_run_end_to_end(tmp_path):
    md, data = _smoke(tmp_path)
    rows = {r["key"]: r for r in data["rows"]}
    for key in ("add", "copy", "matmul-f32", "matmul-bf16"):
        assert rows[key]["checked_against"] in ("PyTorch", "NumPy"), key
    for key in ("resnet18", "lenet"):
        if "ember" in rows[key]["libs"]:
            assert rows[key]["memory"]["ember"]["peak_bytes"] > 0, key
    if EMULATED:
        assert "emulated device" in md


@needs_device
@pytest.mark.skipif(not _has_torch(), reason="PyTorch is not installed")
def test_smoke_run_with_pytorch_on_the_cpu(tmp_path):
    """The harness's PyTorch side (models, the result checks against PyTorch,
    the ratio and target columns), with PyTorch on the CPU (--torch-cpu)."""
    md, data = _smoke(tmp_path, "--torch-cpu")
    for row in data["rows"]:
        assert "torch" in row["libs"], row["name"]
        if "ember" in row["libs"]:
            assert row["checked_against"] == "PyTorch", row["name"]
    assert "on the CPU (--torch-cpu" in md
