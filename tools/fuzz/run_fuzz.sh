#!/bin/sh
# run_fuzz.sh: build the archive fuzz target (clang, -DWEFT_FUZZ=ON), replay the seed corpus,
# then fuzz for N seconds (default 60). New inputs go to a scratch corpus, never into the
# committed seeds; crashes are written to the build directory and fail the script.
#
# Usage: tools/fuzz/run_fuzz.sh [seconds] [build dir]
set -eu
SECONDS_TO_RUN=${1:-60}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${2:-$ROOT/build/fuzz}
SEEDS=$ROOT/tools/fuzz/corpus/archive
JOBS=${JOBS:-2}

if [ ! -f "$BUILD/CMakeCache.txt" ]; then
    CC=${CC:-clang} cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Debug -DWEFT_FUZZ=ON \
        -DWEFT_BUILD_TESTS=OFF -DWEFT_BUILD_BENCH=OFF
fi
cmake --build "$BUILD" --target weft_fuzz_archive -j "$JOBS"
FUZZER=$(find "$BUILD" -name weft_fuzz_archive -type f -perm -u+x | head -n 1)

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

echo "== replaying $(ls "$SEEDS" | wc -l) seeds from $SEEDS"
"$FUZZER" -runs=0 "$SEEDS"

SCRATCH=$BUILD/fuzz-corpus
mkdir -p "$SCRATCH"
echo "== fuzzing for $SECONDS_TO_RUN s (scratch corpus $SCRATCH)"
cd "$BUILD"
"$FUZZER" -max_total_time="$SECONDS_TO_RUN" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 "$SCRATCH" "$SEEDS"
