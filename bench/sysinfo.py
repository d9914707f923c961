"""What the results header says about the machine, the libraries and the run.

OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE: on some processors these machines set
them, because older OpenBLAS builds compute wrong results or crash there.
They also make a current NumPy pick a slower kernel, so NumPy's matmul (and
Ember's, whose scipy-openblas32 reads the same variables) can look slow.
The harness reports their values in the header and never changes them: to
benchmark without them, unset both together in that one shell command
(`env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python bench/run.py`) and check
with threadpoolctl which kernel OpenBLAS then runs.
"""
from __future__ import annotations

import datetime
import os
import platform
import sys

OPENBLAS_VARS = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def cpus_available() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def machine_info() -> dict:
    """Facts gathered in the parent process (no library imported)."""
    info = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": cpu_model(),
        "cpus": cpus_available(),
        "machine": platform.machine(),
        "python": platform.python_version(),
        "loadavg": None,
        "openblas_env": {k: os.environ.get(k) for k in OPENBLAS_VARS},
    }
    try:
        info["loadavg"] = os.getloadavg()
    except OSError:  # pragma: no cover
        pass
    return info


def blas_info() -> list[dict]:
    """The BLAS/OpenMP libraries loaded in this process, via threadpoolctl if
    it is installed (it is optional: nothing is limited through it)."""
    try:
        import threadpoolctl
    except ImportError:
        return []
    out = []
    for lib in threadpoolctl.threadpool_info():
        out.append({k: lib.get(k) for k in
                    ("internal_api", "version", "architecture", "num_threads", "filepath")})
    return out


def library_versions(mods: dict) -> dict:
    out = {"numpy": sys.modules["numpy"].__version__}
    if "torch" in mods:
        out["torch"] = mods["torch"].__version__
    if "ember" in mods:
        th = mods["ember"]
        v = getattr(th, "__version__", None)
        if v is None:
            try:
                from importlib.metadata import version

                v = version("ember-th")
            except Exception:  # noqa: BLE001
                v = "?"
        out["ember"] = v
        if hasattr(th, "has_blas"):  # which GEMM this libTH build uses
            try:
                out["ember_blas"] = ("OpenBLAS (scipy-openblas32)" if th.has_blas()
                                     else "blocked GEMM (TH_NO_BLAS build)")
            except Exception:  # noqa: BLE001
                pass
        if hasattr(th, "has_threads"):
            try:
                if not th.has_threads():
                    out["ember_blas"] = out.get("ember_blas", "?") + ", single-threaded build"
            except Exception:  # noqa: BLE001
                pass
    return out
