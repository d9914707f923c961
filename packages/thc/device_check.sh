#!/bin/sh
# On a machine with a GPU: build libTHC with CUDA, run the C test programs
# and the Python tests (gpu-marked ones included), print a summary table.
# Run from anywhere; needs nvcc, make, a C compiler, python3 with cffi and
# pytest, and ember (packages/autograd) importable for the front's tests.
# Exits non-zero when any step fails.
cd "$(dirname "$0")" || exit 1
PYTHON=${PYTHON:-python3}
LOG=${LOG:-build/device_check}
mkdir -p "$LOG"
results=""
failed=0

step() {   # step NAME COMMAND...: runs it, logs its output, records the outcome
    name=$1; shift
    if "$@" >"$LOG/$name.log" 2>&1; then status=ok; else status=FAILED; failed=1; fi
    summary=$(grep -E "passed|failed|skipped|error" "$LOG/$name.log" | tail -n 1)
    results="$results$(printf '%-10s %-7s %s' "$name" "$status" "$summary")
"
}

nvidia-smi -L 2>/dev/null || echo "nvidia-smi: not found (the device test will say whether a GPU is usable)"
step build make -j"${THC_MAKE_JOBS:-4}"
step c-tests make check
step binding env THC_BUILD_DIR=build "$PYTHON" build_thc.py
# the repository's packages first on the path, so this checkout is what runs;
# the front (../autograd) only with an importable ember-th (installed, or
# built in ../th), else its tests skip
REPO_PATH="$PWD"
if PYTHONPATH="$PWD/../th${PYTHONPATH:+:$PYTHONPATH}" "$PYTHON" -c "import ember.th" 2>/dev/null; then
    REPO_PATH="$PWD:$PWD/../autograd:$PWD/../th"
else
    echo "ember.th is not importable here: the ember front's tests will skip"
fi
step pytest env PYTHONPATH="$REPO_PATH${PYTHONPATH:+:$PYTHONPATH}" \
    "$PYTHON" -m pytest -v -rs -p no:cacheprovider tests

echo
printf '%-10s %-7s %s\n' step status "last summary line"
printf '%s' "$results"
[ "$failed" = 0 ] || echo "logs: $PWD/$LOG"
grep -h "skipped" "$LOG/c-tests.log" "$LOG/pytest.log" 2>/dev/null | grep -i "no CUDA device" | head -n 3
exit "$failed"
