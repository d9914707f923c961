#!/usr/bin/env bash
# libTH and libTHNN for 64-bit Arm (aarch64), cross-compiled here and tested
# under qemu-user: both builds (OpenBLAS from scipy-openblas32's aarch64
# wheel, and TH_NO_BLAS=1), every C test program of both libraries, and the
# C example (examples/c/convnet.c) checked against ember's output computed
# on this machine.  Run by `tox -e aarch64`; needs ember-th, ember-thnn,
# ember and ember-nn installed for this machine's Python (the reference
# output of the C example).
#
#   embedded/aarch64.sh [BUILD_DIR]      (default: build/aarch64)
#
# Tools: gcc-aarch64-linux-gnu, qemu-user and aarch64 glibc + zlib (Debian
# multiarch: libc6:arm64 zlib1g:arm64, which OpenBLAS's gfortran runtime
# needs).  Installed with apt-get when missing and apt-get can run (root);
# otherwise the script stops and names the packages.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="$(realpath -m "${1:-$ROOT/build/aarch64}")"
PYTHON="${PYTHON:-python3}"
JOBS="${EMBER_MAKE_JOBS:-2}"
CROSS_CC=aarch64-linux-gnu-gcc

need_tools() {
    command -v "$CROSS_CC" >/dev/null && command -v qemu-aarch64 >/dev/null &&
        [ -e /lib/ld-linux-aarch64.so.1 ] && [ -e /usr/lib/aarch64-linux-gnu/libz.so.1 ]
}
if ! need_tools; then
    pkgs="gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user libc6:arm64 zlib1g:arm64"
    if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
        echo "== installing $pkgs"
        dpkg --add-architecture arm64
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $pkgs >/dev/null
    else
        echo "aarch64.sh needs a cross compiler, qemu-user and aarch64 glibc + zlib:" >&2
        echo "  dpkg --add-architecture arm64 && apt-get update &&" >&2
        echo "  apt-get install $pkgs   (as root, on Debian/Ubuntu)" >&2
        exit 2
    fi
fi

mkdir -p "$OUT"
# OpenBLAS for aarch64: the same scipy-openblas32 the x86-64 build uses,
# its manylinux aarch64 wheel
OPENBLAS="$OUT/openblas/scipy_openblas32/lib"
if [ ! -e "$OPENBLAS/libscipy_openblas.so" ]; then
    echo "== fetching scipy-openblas32 for aarch64"
    "$PYTHON" -m pip download --quiet --no-deps --only-binary=:all: \
        --platform manylinux_2_28_aarch64 --platform manylinux2014_aarch64 \
        -d "$OUT/openblas" scipy-openblas32
    "$PYTHON" -m zipfile -e "$(ls "$OUT"/openblas/scipy_openblas32-*.whl | head -1)" "$OUT/openblas"
fi

# qemu-user runs the aarch64 programs through the multiarch loader;
# TH_TEST_QEMU skips the one check qemu-user cannot run (threads started
# in a forked child).  The emulated CPU is a Cortex-A72 (a Raspberry Pi 4's
# core): qemu's default model advertises SME, for which OpenBLAS 0.3.34
# picks kernels that qemu 7.2 runs wrongly (libTH's GEMM checks fail).
export QEMU_CPU="${QEMU_CPU:-cortex-a72}"
run_arm() { LD_LIBRARY_PATH="$OPENBLAS" TH_TEST_QEMU=1 timeout 900 qemu-aarch64 "$@"; }

failed=0
check_dir() {   # every test program in $1, under qemu
    for t in "$1"/tests/test_*; do
        echo "== $t"
        if ! run_arm "$t"; then failed=1; echo "FAILED: $t"; fi
    done
}

for config in blas noblas; do
    th="$OUT/th-$config" thnn="$OUT/thnn-$config"
    if [ $config = noblas ]; then flags=(TH_NO_BLAS=1); else flags=(OPENBLAS_DIR="$OPENBLAS"); fi
    echo "== libTH and libTHNN for aarch64 ($config)"
    make -s -C "$ROOT/packages/th" -j"$JOBS" CC=$CROSS_CC BUILD="$th" "${flags[@]}" all
    make -s -C "$ROOT/packages/thnn" -j"$JOBS" CC=$CROSS_CC BUILD="$thnn" \
        TH_INCLUDE="$ROOT/packages/th/include" TH_LIB_DIR="$th/lib" all
    # they are aarch64 programs, not this machine's
    file_arch=$("$PYTHON" -c "import sys; d = open(sys.argv[1], 'rb').read(20); \
print(int.from_bytes(d[18:20], 'little'))" "$th/lib/libTH.so")
    [ "$file_arch" = 183 ] || { echo "libTH.so is not an aarch64 ELF file (e_machine $file_arch)"; exit 1; }
    check_dir "$th"
    check_dir "$thnn"

    echo "== examples/c/convnet.c on aarch64 ($config)"
    "$PYTHON" "$ROOT/examples/c/convnet_data.py" "$OUT/convnet.bin"
    $CROSS_CC -std=c99 -Wall -Wextra -Werror "$ROOT/examples/c/convnet.c" -o "$OUT/convnet-$config" \
        -I"$ROOT/packages/th/include" -I"$ROOT/packages/thnn/include" \
        -L"$thnn/lib" -L"$th/lib" -lTHNN -lTH -Wl,-rpath,"$thnn/lib:$th/lib" -lm
    if ! run_arm "$OUT/convnet-$config" "$OUT/convnet.bin"; then failed=1; echo "FAILED: convnet ($config)"; fi
done

if [ $failed = 0 ]; then echo "aarch64: every C test program and the C example passed under qemu"; fi
exit $failed
