#!/bin/sh
# Runs a command with the AddressSanitizer and UBSan runtimes preloaded, as
# a Python process needs them to load a libTH/libTHNN built with
# -fsanitize=address,undefined (README "Sanitizer build"):
#   sh packages/th/tools/with_sanitizers.sh python -m pytest --capture=sys packages/th/tests
# The runtimes are the compiler's own (${CC:-gcc} -print-file-name).
# Leak detection is off by default (CPython does not free everything at
# exit), and a too-large allocation returns NULL, as it does without ASan,
# so that libTH reports it as a MemoryError instead of ASan aborting.
set -eu
cc=${CC:-gcc}
asan=$($cc -print-file-name=libasan.so)
ubsan=$($cc -print-file-name=libubsan.so)
for lib in "$asan" "$ubsan"; do
    case $lib in
    /*) [ -e "$lib" ] && continue ;;
    esac
    echo "with_sanitizers.sh: $cc has no $lib (install the compiler's sanitizer runtimes, e.g. libasan/libubsan)" >&2
    exit 2
done
LD_PRELOAD="$asan $ubsan${LD_PRELOAD:+ $LD_PRELOAD}"
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:allocator_may_return_null=1}
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
export LD_PRELOAD ASAN_OPTIONS UBSAN_OPTIONS
exec "$@"
