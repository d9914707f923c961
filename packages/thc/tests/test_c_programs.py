"""Runs the C test programs (`make check`) of the build that matches the
installed library: with CUDA when nvcc is found, else host-side only."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import ember.thc as thc

HERE = Path(__file__).resolve().parent.parent


def test_make_check():
    # libTH comes from the ember-th of the interpreter running the tests
    env = dict(os.environ, PYTHON=sys.executable)
    if not thc.built_with_cuda() or not (shutil.which("nvcc") or os.environ.get("NVCC")
                                         or os.environ.get("CUDA_HOME")):
        env["EMBER_NO_CUDA"] = "1"
    jobs = os.environ.get("THC_MAKE_JOBS", "2")
    out = subprocess.run(["make", "-C", str(HERE), f"-j{jobs}", "check"], env=env,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-4000:]
    assert "test_allocator:" in out.stdout and " 0 failed" in out.stdout
    assert "test_launch:" in out.stdout
    assert "test_limits: " in out.stdout
