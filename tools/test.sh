#!/usr/bin/env bash
# test.sh: builds and runs the whole test suite the way CI does (the README's test command).
#
# Usage: tools/test.sh [--quick] [--fresh] [--budget MIN] [--no-consumers] [--no-fuzz] [PRESET...]
#   (no preset)     the whole matrix, every preset always: gcc and clang x {ASan+UBSan,
#                   ThreadSanitizer, release -Werror} (dev tsan release dev-clang tsan-clang
#                   release-clang), each running every ctest entry except the label `long`
#                   (the 1,000,000-operation model run; `ctest -L long` runs it) and
#                   check_layers (run once, as a step of its own below), so also
#                   the label `interleavings` (the model-checked scenarios; litmus tests
#                   only under TSan and clang's ASan) and, in the tsan presets, `chaos`; then the
#                   consumer checks (static and shared), the fuzz step (tools/fuzz/run_fuzz.sh:
#                   replays the seed corpus, then fuzzes for 60 s), the layering check and the
#                   format check (.editorconfig rules fail, clang-format differences are listed)
#   PRESET...       only these test presets (see CMakePresets.json), plus the layering and
#                   format checks; add the consumer and fuzz steps with --consumers / --fuzz
#   --budget MIN    the time the run should take (default 28: CI allows 30). Nothing is
#                   skipped to meet it; a run that takes longer says so in its summary
#   --quick         dev only, plus the layering and format checks
#   --fresh         reconfigure each preset from scratch (cmake --fresh) and rebuild the fuzzer
#   --no-consumers  skip tools/check_consumers.sh       (--consumers: run it with PRESET...)
#   --no-fuzz       skip tools/fuzz/run_fuzz.sh          (--fuzz: run it with PRESET...)
# Environment: WEFT_BUILD_PREFIX (default: empty) goes between build/ and every directory
#   this writes, as it does for the presets (CMakePresets.json): WEFT_BUILD_PREFIX=ci- builds
#   the presets in build/ci-<preset>, fuzzes in build/ci-fuzz and logs to build/ci-logs;
#   WEFT_BUILD_PREFIX=ci/ uses build/ci/<preset>. The default is build/<preset>, build/fuzz
#   and build/logs.
#
# Missing packages are installed first when run as root (tools/deps.sh). Each preset is
# configured (cmake --preset P), built (cmake --build --preset P: -j2) and tested (ctest --preset
# P); the full log goes to build/logs/<preset>.log, and every test's time and
# Criterion's summary lines are printed here. The run fails (exit 1) on a failed build
# (warnings are errors in release*), a failing or crashing test, a sanitizer report anywhere
# in the test output (ctest fails such a test itself; the logs are searched too, since
# Criterion passes a test whose process leaks at exit), or a preset where no Criterion suite
# ran at all. It goes on after a failure so one run shows every problem.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

presets=()
quick=0
fresh=()
consumers=default
fuzz=default
budget_min=28
while [[ $# -gt 0 ]]; do
    case "$1" in
        --quick) quick=1 ;;
        --fresh) fresh=(--fresh) ;;
        --budget) budget_min=${2:?--budget needs minutes}; shift ;;
        --no-consumers) consumers=0 ;;
        --consumers) consumers=1 ;;
        --no-fuzz) fuzz=0 ;;
        --fuzz) fuzz=1 ;;
        -h|--help) sed -n '2,/^set -e/{/^#/p}' "$0"; exit 0 ;;
        -*) echo "test.sh: unknown option '$1'" >&2; exit 2 ;;
        *) presets+=("$1") ;;
    esac
    shift
done
matrix=0
if [[ ${#presets[@]} -eq 0 ]]; then
    if [[ $quick == 1 ]]; then
        presets=(dev)
    else
        presets=(dev tsan release dev-clang tsan-clang release-clang)
        matrix=1
    fi
fi
# The consumer and fuzz steps belong to the whole matrix; with named presets they are opt-in.
[[ $consumers == default ]] && consumers=$matrix
[[ $fuzz == default ]] && fuzz=$matrix

build_prefix=${WEFT_BUILD_PREFIX:-}
if [[ $build_prefix == *..* || $build_prefix == /* ]]; then
    echo "test.sh: WEFT_BUILD_PREFIX must stay inside build/ (got '$build_prefix')" >&2
    exit 2
fi
budget=$((budget_min * 60))

tools/deps.sh test

logs=build/${build_prefix}logs
mkdir -p "$logs"
start_all=$SECONDS
summary=()
failed=0
sanitizer_re='ERROR: (Address|Leak|Thread|Memory)Sanitizer|WARNING: ThreadSanitizer|runtime error:|SUMMARY: [A-Za-z]+Sanitizer'

record() { # record <name> <PASS|FAIL> <seconds> [note]
    summary+=("$(printf '%-16s %-4s %5ss  %s' "$1" "$2" "$3" "${4:-}")")
    [[ $2 == PASS ]] || failed=1
}

run_preset() {
    local p=$1 log="$logs/$1.log" bdir="build/$build_prefix$1" t0=$SECONDS note="" status=PASS
    local testlog="$bdir/Testing/Temporary/LastTest.log" t_conf t_build t_test
    printf '\n==== %s: configure, build, test in %s (log: %s)\n' "$p" "$bdir" "$log"
    rm -f "$testlog"
    : >"$log"
    if ! cmake --preset "$p" "${fresh[@]}" >>"$log" 2>&1; then
        status=FAIL
        note="configure failed"
    fi
    t_conf=$((SECONDS - t0))
    if [[ $status == PASS ]] && ! cmake --build --preset "$p" >>"$log" 2>&1; then
        status=FAIL
        note="build failed"
    fi
    t_build=$((SECONDS - t0 - t_conf))
    # check_layers reads only the sources: it runs once, as a step of its own (below)
    if [[ $status == PASS ]] && ! ctest --preset "$p" -E '^check_layers$' >>"$log" 2>&1; then
        status=FAIL
        note="tests failed"
    fi
    t_test=$((SECONDS - t0 - t_conf - t_build))
    if [[ $note == "configure failed" || $note == "build failed" ]]; then
        echo "---- last lines of $log:"
        tail -n 60 "$log"
    fi
    # Every test's result and time, then the list ctest gives of the failed ones.
    grep -aE '^ *[0-9]+/[0-9]+ Test +#' "$log" | sed 's/^ */  /' || true
    sed -n '/The following tests FAILED/,$p' "$log" | grep -aE 'FAILED|^\s+[0-9]+ - ' \
        | sed 's/^ */  /' || true
    if [[ -f $testlog ]]; then
        grep -aE 'Synthesis:' "$testlog" | sed 's/^/  /' || true
        grep -aE 'tests passed|tests failed|Total Test time' "$log" | sed 's/^/  /' || true
        # A failed run names its failing tests and what they said (assertion, time-out,
        # crash), so a failure seen only on another machine can be read from this summary.
        if [[ $note == *"tests failed"* ]]; then
            echo "---- Criterion failures in $testlog:"
            grep -aE '^\[FAIL\]|^\[----\] +[^ ]' "$testlog" | head -n 60 | sed 's/^/  /' || true
        fi
        local suites
        suites=$(grep -acE 'Synthesis:' "$testlog" || true)
        if [[ $suites -eq 0 ]]; then
            status=FAIL
            note="${note:+$note; }no Criterion suite ran"
        else
            note="${note:+$note; }$suites Criterion suites"
        fi
        if grep -aqE "$sanitizer_re" "$testlog"; then
            status=FAIL
            note="${note:+$note; }sanitizer report"
            echo "---- sanitizer reports in $testlog:"
            grep -aE -B2 -A12 "$sanitizer_re" "$testlog" | head -n 80
        fi
    elif [[ $status == PASS ]]; then
        status=FAIL
        note="no test log"
    fi
    note="configure ${t_conf} s, build ${t_build} s, test ${t_test} s; $note"
    echo "==== $p: $status ($((SECONDS - t0)) s) $note"
    record "$p" "$status" "$((SECONDS - t0))" "$note"
}

run_check() { # run_check <name> <command...>
    local name=$1 log="$logs/$1.log" t0=$SECONDS
    shift
    printf '\n==== %s (log: %s)\n' "$name" "$log"
    if "$@" >"$log" 2>&1; then
        grep -aE '^consumer ok|^check_headers: |^check_layers: ok|^check_format:|^check_consumers: |all three consumers|^== |^(stat::|Done )' \
            "$log" | sed 's/^/  /' || true
        echo "==== $name: PASS ($((SECONDS - t0)) s)"
        record "$name" PASS "$((SECONDS - t0))"
    else
        tail -n 40 "$log"
        echo "==== $name: FAIL ($((SECONDS - t0)) s)"
        record "$name" FAIL "$((SECONDS - t0))"
    fi
}

run_check check_layers tools/check_layers.sh
run_check check_format tools/check_format.sh
for p in "${presets[@]}"; do
    run_preset "$p"
done
# Public headers as C11 and C++17/20 (needs a configured tree for weft/version.h).
run_check check_headers tools/check_headers.sh "build/$build_prefix${presets[0]}/include"
if [[ $consumers == 1 ]]; then
    run_check consumers-static env CC=gcc tools/check_consumers.sh
    run_check consumers-shared env CC=clang tools/check_consumers.sh --shared
fi
if [[ $fuzz == 1 ]]; then
    if [[ -x tools/fuzz/run_fuzz.sh ]]; then
        # run_fuzz.sh keeps an existing configuration; --fresh starts from an empty directory.
        [[ ${#fresh[@]} -eq 0 ]] || rm -rf "build/${build_prefix}fuzz"
        run_check fuzz env CC=clang tools/fuzz/run_fuzz.sh 60 "$root/build/${build_prefix}fuzz"
    else
        echo "==== fuzz: NOT RUN: tools/fuzz/run_fuzz.sh is missing or not executable"
        summary+=("$(printf '%-16s %-4s %5ss  %s' fuzz SKIP - "tools/fuzz/run_fuzz.sh missing or not executable")")
    fi
fi

total=$((SECONDS - start_all))
printf '\n==== summary (%d s in all; budget %d min; %s; load %s)\n' "$total" "$budget_min" \
    "$(nproc) cores" "$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')"
printf '  %s\n' "${summary[@]}"
if (( total > budget )); then
    echo "test.sh: note: the run took $((total / 60)) min, over the ${budget_min}-minute budget"
fi
if [[ $failed != 0 ]]; then
    echo "test.sh: FAILED"
    exit 1
fi
echo "test.sh: all passed"
