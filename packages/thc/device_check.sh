#!/bin/sh
# On a machine with a GPU, in one run (under 10 minutes on an H100 with 16
# cores): build libTHC with nvcc and run its C test programs; install ember-th,
# ember-thc, the front (autograd), ember-thnn, ember-thcunn, ember-nn and
# ember-vision from this checkout into a fresh virtual environment; run
# libTHCUNN's C test programs, the Python tests of ember.thc, ember.thcunn, the
# front on CUDA tensors and ember.nn on CUDA tensors (one pytest run each:
# their conftest helpers collide), and the GPU benchmark (bench/gpu.py
# --quick, Ember against PyTorch CUDA); print a summary table (step, status,
# last summary line). Run from anywhere; logs (and the benchmark's table and
# JSON) go to packages/thc/build/device_check/. Exits non-zero when any step
# fails.
#
# What it assumes of the machine (it downloads nothing: there may be no network):
# - nvcc ($NVCC, else PATH, else $CUDA_HOME/bin, else /usr/local/cuda/bin), make,
#   cc and c++; nvidia-smi (optional: the GPU's name and compute capability);
# - $PYTHON (default python3, 3.11 or later) with venv, and in its own
#   site-packages: poetry-core (the packages' build backend), cffi, setuptools
#   (cffi's compiler), numpy, pytest, and PyTorch with CUDA (the benchmark's
#   comparison; without it bench/gpu.py measures nothing and the step fails).
#   The preflight step names what is missing. Optional there: scipy-openblas32
#   (ember-th's OpenBLAS GEMM: without it ember-th is built with TH_NO_BLAS=1,
#   its portable blocked GEMM, and the summary says so), pillow and tqdm
#   (ember.vision's datasets; its models, which are all that is used here, do
#   not need them), CuPy (the interop tests skip without it).
# - The venv is made with --system-site-packages so that these are visible,
#   and every local package goes in with `pip install --no-index --no-deps
#   --no-build-isolation`, in dependency order, so that pip never looks for an
#   index (and builds against what the venv already holds). pip 21.3 or later
#   builds in the source tree, so pip's builds of libTHC and libTHCUNN reuse
#   the objects of the make steps (an older pip would compile them again).
#
# nvcc builds for the GPU that is here only (its compute capability, from
# nvidia-smi), which keeps the build within the time; THC_ALL_ARCHS=1 builds
# every target of the Makefiles (sm_75 to sm_90 and PTX), GENCODE=... any list.
# Each step has a time limit, and the whole run a budget
# (DEVICE_CHECK_BUDGET_S, default 540 s): a step that would start after it
# is reported as SKIPPED, one that runs past its limit as TIMEOUT.
cd "$(dirname "$0")" || exit 1
ROOT=$(cd ../.. && pwd)
PYTHON=${PYTHON:-python3}
LOG=${LOG:-build/device_check}
JOBS=${THC_MAKE_JOBS:-16}
BUDGET=${DEVICE_CHECK_BUDGET_S:-540}
BENCH_RESERVE=${DEVICE_CHECK_BENCH_S:-180}   # kept for the benchmark, the last step
mkdir -p "$LOG"
LOG=$(cd "$LOG" && pwd)
VENV=$LOG/venv
VPY=$VENV/bin/python
PIP_INSTALL="$VPY -m pip install --no-index --no-deps --no-build-isolation --disable-pip-version-check"
start=$(date +%s)
deadline=$((start + BUDGET))
until=$((deadline - BENCH_RESERVE))   # the steps before the benchmark end by then
results=""
notes=""
failed=0

if command -v timeout >/dev/null 2>&1; then
    limited() { timeout "$@"; }
else
    limited() { shift; "$@"; }
fi

record() {   # record NAME STATUS SUMMARY
    results="$results$(printf '%-15s %-8s %s' "$1" "$2" "$3")
"
}

step() {   # step NAME LIMIT_S COMMAND...: runs it (in $STEP_DIR, default here) under a
           # time limit, logs its output, records the outcome
    name=$1; limit=$2; shift 2
    left=$((until - $(date +%s)))
    if [ "$left" -lt 15 ]; then
        record "$name" SKIPPED "out of time (budget ${BUDGET} s, ${BENCH_RESERVE} s of it kept for the benchmark)"
        failed=1
        return 1
    fi
    [ "$limit" -gt "$left" ] && limit=$left
    t0=$(date +%s)
    ( cd "${STEP_DIR:-.}" && limited "$limit" "$@" ) >"$LOG/$name.log" 2>&1
    rc=$?
    secs=$(($(date +%s) - t0))
    if [ "$rc" = 0 ]; then status=ok
    elif [ "$rc" = 124 ]; then status=TIMEOUT; failed=1
    else status=FAILED; failed=1
    fi
    summary=$(grep -E "passed|failed|skipped|[Ee]rror:|Error [0-9]+|Successfully installed|targets met|no GPU to benchmark|^note:" \
              "$LOG/$name.log" | tail -n 1)
    # nothing matched: the log's last line when the step failed (a make
    # command line when it did not); pytest's ===== rules dropped
    [ -n "$summary" ] || [ "$rc" = 0 ] || summary=$(tail -n 1 "$LOG/$name.log")
    summary=$(printf '%s' "$summary" | sed -e 's/^=* *//' -e 's/ *=*$//')
    [ "$status" = TIMEOUT ] && summary="after ${limit} s: $summary"
    record "$name" "$status" "$(printf '%s' "$summary" | cut -c 1-110) (${secs} s)"
    [ "$rc" = 0 ]
}

nvidia-smi -L 2>/dev/null || echo "nvidia-smi: not found (the device tests will say whether a GPU is usable)"

# ---- the GPU's own architecture only, unless asked otherwise
if [ -z "${GENCODE:-}" ] && [ "${THC_ALL_ARCHS:-0}" != 1 ]; then
    cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1 | tr -d ' .')
    case "$cap" in
        [0-9][0-9]|[0-9][0-9][0-9]) GENCODE="-gencode arch=compute_$cap,code=sm_$cap" ;;
    esac
fi
if [ -n "${GENCODE:-}" ]; then
    notes="${notes}note: nvcc built for $GENCODE only (THC_ALL_ARCHS=1: every target)
"
fi

# ---- what the machine has (nothing can be installed from an index here)
cat >"$LOG/preflight.py" <<'EOF'
import importlib, importlib.util, sys
print(f"python {sys.version.split()[0]} at {sys.executable}")
need = ("cffi", "poetry.core", "setuptools", "numpy", "pytest")
optional = ("pip", "torch", "scipy_openblas32", "cupy", "PIL", "tqdm")
missing = []
for name in need + optional:
    try:
        m = importlib.import_module(name)
        print(f"{name}: {getattr(m, '__version__', 'found')}")
    except Exception as e:  # noqa: BLE001
        print(f"{name}: MISSING ({type(e).__name__}: {e})")
        if name in need:
            missing.append(name)
try:
    import torch
    print(f"torch CUDA: {torch.version.cuda}, available: {torch.cuda.is_available()}")
except Exception:  # noqa: BLE001
    pass
if sys.version_info < (3, 11):
    missing.append("Python >= 3.11")
if missing:
    print(f"Error: missing from {sys.executable}: {', '.join(missing)} (no network: install them "
          "into the system python first, or set PYTHON to one that has them)")
    sys.exit(1)
have = lambda m: importlib.util.find_spec(m) is not None  # noqa: E731
cuda = "no PyTorch"
if have("torch"):
    import torch
    cuda = f"PyTorch CUDA {'available' if torch.cuda.is_available() else 'NOT available'}"
print(f"note: build and test requirements found; {cuda}; scipy-openblas32 "
      f"{'found' if have('scipy_openblas32') else 'missing (TH_NO_BLAS=1)'}; "
      f"CuPy {'found' if have('cupy') else 'missing'}")
EOF
step preflight 60 "$PYTHON" "$LOG/preflight.py"
ls -l /usr/local/cuda/lib64/libcublas.so* 2>/dev/null >>"$LOG/preflight.log"

# ember-th's OpenBLAS GEMM needs scipy-openblas32 at build and run time
NOBLAS=
if ! "$PYTHON" -c "import scipy_openblas32" 2>/dev/null; then
    NOBLAS=1
    notes="${notes}note: scipy-openblas32 is not importable: ember-th was built with TH_NO_BLAS=1 (blocked GEMM, no OpenBLAS)
"
fi

# ---- libTHC and its C test programs
if [ -n "${GENCODE:-}" ]; then
    step build 300 make -j"$JOBS" "GENCODE=$GENCODE"
else
    step build 300 make -j"$JOBS"
fi
step c-tests 120 make check

# ---- a fresh venv that sees the system's packages, and the packages of this checkout
rm -rf "$VENV"
# (without ensurepip, as on Debian without python3-venv: no pip of its own; the
# system's pip, visible through --system-site-packages, then installs into it)
step venv 60 sh -c '"$0" -m venv --system-site-packages "$1" || { rm -rf "$1";
    "$0" -m venv --system-site-packages --without-pip "$1"; } && "$1/bin/python" -m pip --version' \
    "$PYTHON" "$VENV"
# builds reuse the objects above (same BUILD folder); one make job count for all
export THC_MAKE_JOBS="$JOBS" TH_MAKE_JOBS="$JOBS" THNN_MAKE_JOBS="$JOBS" THCUNN_MAKE_JOBS="$JOBS"
STEP_DIR=$ROOT
if [ -n "$NOBLAS" ]; then
    step install-th 180 env TH_NO_BLAS=1 $PIP_INSTALL ./packages/th
else
    step install-th 180 $PIP_INSTALL ./packages/th
fi
step install-thc 180 env THC_BUILD_DIR=build $PIP_INSTALL ./packages/thc
step install-front 120 $PIP_INSTALL ./packages/autograd ./packages/nn ./packages/vision
step install-thnn 180 $PIP_INSTALL ./packages/thnn
# libTHCUNN and its C test programs against the installed ember-thc, then the
# package (built in the same folder, so nvcc runs once)
if [ -n "${GENCODE:-}" ]; then
    step thcunn-build 240 make -C packages/thcunn -j"$JOBS" PYTHON="$VPY" "GENCODE=$GENCODE"
else
    step thcunn-build 240 make -C packages/thcunn -j"$JOBS" PYTHON="$VPY"
fi
step install-thcunn 180 env THCUNN_BUILD_DIR=build $PIP_INSTALL ./packages/thcunn
step thcunn-c 120 make -C packages/thcunn PYTHON="$VPY" check

# ---- the Python tests, from the repository root, one run per package
PYTEST="$VPY -m pytest -rs -p no:cacheprovider"
step pytest-thc 240 $PYTEST packages/thc/tests
step pytest-thcunn 180 $PYTEST packages/thcunn/tests
step pytest-front 180 $PYTEST packages/autograd/tests/test_cuda.py
step pytest-nn 240 $PYTEST packages/nn/tests/test_cuda.py packages/nn/tests/test_cuda_functional.py

# ---- the GPU benchmark: Ember against PyTorch CUDA (a failure here is a
# failed workload, a result that differs from PyTorch's, or no GPU)
until=$deadline
step bench-gpu 300 "$VPY" bench/gpu.py --quick --require-gpu --out "$LOG/bench-gpu.md"
STEP_DIR=

echo
printf '%-15s %-8s %s\n' step status "last summary line (time)"
printf '%s' "$results"
printf '%s' "$notes"
echo "total: $(($(date +%s) - start)) s; logs: $LOG"
[ -f "$LOG/bench-gpu.md" ] && echo "benchmark table: $LOG/bench-gpu.md (and .json)"
grep -h "skipped" "$LOG/c-tests.log" "$LOG/pytest-thc.log" 2>/dev/null | grep -i "no CUDA device" | head -n 3
exit "$failed"
