#!/bin/sh
# run_fuzz.sh: build the archive fuzz target (clang, -DWEFT_FUZZ=ON: the target with
# -fsanitize=fuzzer,address,undefined, weft itself instrumented for coverage) in its own build
# directory, replay the committed seed corpus, then fuzz for N seconds (default 60).
# New inputs go to a scratch corpus in the build directory, never into the committed seeds;
# crash, leak, timeout and out-of-memory inputs are written to <build>/fuzz-artifacts/.
# Exits non-zero on any crash, leak or sanitizer report (in the replay or the fuzzing), and
# ends with one summary line: "run_fuzz: OK|FAIL ... execs ... corpus ...".
#
# Usage: tools/fuzz/run_fuzz.sh [seconds] [build dir]     (defaults: 60, build/fuzz)
# Environment: CC (default clang), JOBS (build parallelism, default 2).
set -eu
SECONDS_TO_RUN=${1:-60}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${2:-$ROOT/build/fuzz}
SEEDS=$ROOT/tools/fuzz/corpus/archive
JOBS=${JOBS:-2}

case $SECONDS_TO_RUN in
'' | *[!0-9]*) echo "run_fuzz: seconds must be a whole number (got '$SECONDS_TO_RUN')" >&2; exit 2 ;;
esac

if [ ! -f "$BUILD/CMakeCache.txt" ]; then
    cmake -S "$ROOT" -B "$BUILD" -DCMAKE_C_COMPILER="${CC:-clang}" -DCMAKE_BUILD_TYPE=Debug \
        -DWEFT_FUZZ=ON -DWEFT_BUILD_TOOLS=ON -DWEFT_BUILD_TESTS=OFF -DWEFT_BUILD_BENCH=OFF \
        -DWEFT_INSTALL=OFF
fi
cmake --build "$BUILD" --target weft_fuzz_archive -j "$JOBS"
FUZZER=$BUILD/tools/fuzz/weft_fuzz_archive
if [ ! -x "$FUZZER" ]; then
    echo "run_fuzz: FAIL: $FUZZER was not built (is WEFT_FUZZ=ON in $BUILD?)" >&2
    exit 1
fi

# Our settings go last so they win over anything inherited (later flags override earlier).
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=1:abort_on_error=1"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}print_stacktrace=1:halt_on_error=1"

ARTIFACTS=$BUILD/fuzz-artifacts/
SCRATCH=$BUILD/fuzz-corpus
LOG=$BUILD/fuzz.log
mkdir -p "$ARTIFACTS" "$SCRATCH"
: >"$LOG"
COMMON="-artifact_prefix=$ARTIFACTS -max_len=65536 -timeout=10 -rss_limit_mb=2048 -detect_leaks=1"

# A sanitizer can report without the process failing (a report from another thread racing
# the exit, or options overridden by the environment): scan the log as well as the status.
reported() {
    grep -Eq 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:|SUMMARY: (AddressSanitizer|UndefinedBehaviorSanitizer|LeakSanitizer)|==[0-9]+== ?ERROR' "$1"
}

fail() {
    echo "== last lines of $LOG:" >&2
    tail -n 40 "$LOG" >&2
    echo "run_fuzz: FAIL ($1); inputs that failed are in $ARTIFACTS" >&2
    exit 1
}

SEED_COUNT=$(find "$SEEDS" -type f | wc -l | tr -d ' ')
echo "== replaying $SEED_COUNT seeds from $SEEDS"
status=0
# shellcheck disable=SC2086 # COMMON is a list of flags
"$FUZZER" $COMMON -runs=0 "$SEEDS" >>"$LOG" 2>&1 || status=$?
if [ "$status" -ne 0 ] || reported "$LOG"; then
    fail "seed replay, exit status $status"
fi

echo "== fuzzing for $SECONDS_TO_RUN s (scratch corpus $SCRATCH, log $LOG)"
START=$(date +%s)
# shellcheck disable=SC2086
"$FUZZER" $COMMON -max_total_time="$SECONDS_TO_RUN" -print_final_stats=1 \
    "$SCRATCH" "$SEEDS" >>"$LOG" 2>&1 || status=$?
ELAPSED=$(($(date +%s) - START))
if [ "$status" -ne 0 ] || reported "$LOG"; then
    fail "fuzzing, exit status $status after $ELAPSED s"
fi

# libFuzzer's final stats, and the corpus it ended with ("#N DONE ... corp: C/B ...").
EXECS=$(sed -n 's/^stat::number_of_executed_units: *//p' "$LOG" | tail -n 1)
RATE=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$LOG" | tail -n 1)
NEW=$(sed -n 's/^stat::new_units_added: *//p' "$LOG" | tail -n 1)
CORPUS=$(sed -n 's/.*DONE .* corp: \([0-9]*\)\/.*/\1/p' "$LOG" | tail -n 1)
COV=$(sed -n 's/.*DONE .* cov: \([0-9]*\) .*/\1/p' "$LOG" | tail -n 1)
echo "run_fuzz: OK: $SEED_COUNT seeds replayed, fuzzed ${ELAPSED} s: ${EXECS:-?} execs" \
    "(${RATE:-?}/s), corpus ${CORPUS:-?} inputs (${NEW:-?} new), cov ${COV:-?}, 0 crashes/leaks/sanitizer reports"
