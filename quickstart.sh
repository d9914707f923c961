#!/usr/bin/env bash
# Sets Ember up in a virtual environment (.venv, made if missing) from this
# checkout, then trains the default model: `ember-vision train` (a LeNet-
# style CNN on the 8x8 digits that ember-vision ships).  Arguments go to
# `ember-vision train` (try --help), except --with-distributed, which also
# installs ember-distributed (MPI through the mpich wheel; then e.g.
# `./quickstart.sh --with-distributed --nproc 2`).  Needs Python 3.11+, a C
# compiler and make.
set -euo pipefail
cd "$(dirname "$0")"

DISTRIBUTED=0
ARGS=()
for arg in "$@"; do
    if [ "$arg" = "--with-distributed" ]; then DISTRIBUTED=1; else ARGS+=("$arg"); fi
done
set -- ${ARGS[@]+"${ARGS[@]}"}

PYTHON=${PYTHON:-python3}
VENV=${EMBER_VENV:-.venv}
if [ ! -x "$VENV/bin/python" ]; then
    echo "==> creating the virtual environment $VENV"
    "$PYTHON" -m venv "$VENV"
fi
PIP=("$VENV/bin/python" -m pip install --quiet --disable-pip-version-check)

echo "==> building libTH and ember.th (packages/th)"
"${PIP[@]}" ./packages/th
echo "==> building libTHNN and ember.thnn (packages/thnn, against the ember-th just installed)"
# ember-thnn compiles against the installed ember-th, so it builds without
# pip's isolated environment; its build tools come first
"${PIP[@]}" "poetry-core>=1.9" "cffi>=1.16" setuptools
"${PIP[@]}" --no-build-isolation ./packages/thnn
echo "==> installing ember, ember.nn and ember.vision"
"${PIP[@]}" ./packages/autograd ./packages/nn ./packages/vision
if [ "$DISTRIBUTED" = 1 ]; then
    echo "==> installing ember.distributed (packages/distributed: mpi4py, the mpich wheel)"
    "${PIP[@]}" ./packages/distributed
fi

echo "==> ember-vision train $*"
exec "$VENV/bin/ember-vision" train "$@"
