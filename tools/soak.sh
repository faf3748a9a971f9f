#!/usr/bin/env bash
# soak.sh: the soak run — at least 10 minutes of frames with structural churn under
# ThreadSanitizer, with resident memory checked flat after warm-up (rule in
# tests/reliability/soak.c: the last window's max heap <= warm-up max * 1.05, and its max RSS
# <= warm-up max * 1.05 + 320 KiB per thread for the allocator's page-granular steps).
# Builds build/rel-tsan (gcc, RelWithDebInfo, WEFT_SANITIZER=thread) unless --build-dir says
# otherwise. Not part of the default CI run.
# Usage: tools/soak.sh [--seconds N (default 600)] [--workers W] [--entities E] [--build-dir D]
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build="$root/build/rel-tsan"
args=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --build-dir) build=$2; shift 2 ;;
        --seconds | --workers | --entities) args+=("$1" "$2"); shift 2 ;;
        *) echo "usage: $0 [--seconds N] [--workers W] [--entities E] [--build-dir D]" >&2; exit 2 ;;
    esac
done
[[ " ${args[*]-} " == *" --seconds "* ]] || args+=(--seconds 600)

if [[ ! -f $build/CMakeCache.txt ]]; then
    cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWEFT_DEBUG_LEVEL=2 \
        -DWEFT_SANITIZER=thread -DWEFT_BUILD_BENCH=OFF -DWEFT_BUILD_TOOLS=OFF >/dev/null
fi
cmake --build "$build" -j2 --target weft_rel_soak >/dev/null
export TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1 suppressions=$root/tools/tsan.supp"
echo "soak.sh: $build/tests/weft_rel_soak ${args[*]}"
exec "$build/tests/weft_rel_soak" "${args[@]}"
