#!/usr/bin/env bash
# test.sh: builds and runs the whole test suite the way CI does (the README's test command).
#
# Usage: tools/test.sh [--quick] [--fresh] [--all] [--budget MIN] [--no-consumers] [PRESET...]
#   (no preset)     the matrix, gcc and clang x {ASan+UBSan, ThreadSanitizer, release -Werror}:
#                   dev tsan dev-clang release always; then release-clang and tsan-clang
#                   while they fit the time budget (estimated from their gcc twin's time;
#                   one that does not fit is reported as SKIPPED, never silently dropped);
#                   then the consumer checks (static always, shared within the budget),
#                   the layering check and the format check (tools/check_format.sh:
#                   .editorconfig rules fail, clang-format differences are listed)
#   PRESET...       only these workflow presets (see CMakePresets.json), plus the checks
#   --all           run every preset and check whatever the budget
#   --budget MIN    the time budget in minutes (default 28: CI allows 30)
#   --quick         dev only, plus the layering and format checks
#   --fresh         reconfigure each preset from scratch (cmake --workflow --fresh)
#   --no-consumers  skip tools/check_consumers.sh
#
# Missing packages are installed first when run as root (tools/deps.sh). Each preset runs
# its workflow (configure, build -j2, ctest) into build/<preset>; the full log goes to
# build/logs/<preset>.log and Criterion's summary lines are printed here. The run fails
# (exit 1) on a failed build (warnings are errors in release*), a failing or crashing test,
# a sanitizer report anywhere in the test output (Criterion does not fail a test whose
# process leaks at exit, so the logs are searched too), or a preset where no Criterion
# suite ran at all. It goes on after a failure so one run shows every problem.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

presets=()
optional=()
quick=0
fresh=()
consumers=1
all=0
budget_min=28
while [[ $# -gt 0 ]]; do
    case "$1" in
        --quick) quick=1 ;;
        --fresh) fresh=(--fresh) ;;
        --all) all=1 ;;
        --budget) budget_min=${2:?--budget needs minutes}; shift ;;
        --no-consumers) consumers=0 ;;
        -h|--help) sed -n '2,27p' "$0"; exit 0 ;;
        -*) echo "test.sh: unknown option '$1'" >&2; exit 2 ;;
        *) presets+=("$1") ;;
    esac
    shift
done
if [[ ${#presets[@]} -eq 0 ]]; then
    if [[ $quick == 1 ]]; then
        presets=(dev)
        consumers=0
    else
        presets=(dev tsan dev-clang release)
        optional=(release-clang tsan-clang)
    fi
fi
budget=$((budget_min * 60))
declare -A took=() # seconds each step took, for the budget estimates

tools/deps.sh test

logs=build/logs
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
    local p=$1 log="$logs/$1.log" t0=$SECONDS note="" status=PASS
    local testlog="build/$p/Testing/Temporary/LastTest.log"
    printf '\n==== %s: configure, build, test (log: %s)\n' "$p" "$log"
    rm -f "$testlog"
    if ! cmake --workflow --preset "$p" "${fresh[@]}" >"$log" 2>&1; then
        status=FAIL
        note="workflow failed"
        echo "---- last lines of $log:"
        tail -n 60 "$log"
    fi
    if [[ -f $testlog ]]; then
        grep -aE 'Synthesis:' "$testlog" | sed 's/^/  /' || true
        grep -aE 'tests passed|tests failed|Total Test time' "$log" | sed 's/^/  /' || true
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
    echo "==== $p: $status ($((SECONDS - t0)) s) $note"
    record "$p" "$status" "$((SECONDS - t0))" "$note"
    took[$p]=$((SECONDS - t0))
}

# fits <estimate seconds>: true when --all, or when the step is expected to end within the
# budget with 3 minutes to spare for the checks that follow.
fits() {
    [[ $all == 1 ]] || (( SECONDS - start_all + $1 + 180 <= budget ))
}

skip() { # skip <name> <estimate>
    echo "==== $1: SKIPPED: about $2 s would exceed the ${budget_min}-minute budget (--all runs it)"
    summary+=("$(printf '%-16s %-4s %5ss  %s' "$1" SKIP - "estimated $2 s; over the ${budget_min}-minute budget")")
}

run_check() { # run_check <name> <command...>
    local name=$1 log="$logs/$1.log" t0=$SECONDS
    shift
    printf '\n==== %s (log: %s)\n' "$name" "$log"
    if "$@" >"$log" 2>&1; then
        grep -aE '^consumer ok|^check_layers: ok|^check_format:|all three consumers' "$log" | sed 's/^/  /' || true
        echo "==== $name: PASS ($((SECONDS - t0)) s)"
        record "$name" PASS "$((SECONDS - t0))"
        took[$name]=$((SECONDS - t0))
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
if [[ $consumers == 1 ]]; then
    run_check consumers-static env CC=gcc tools/check_consumers.sh
fi
for p in "${optional[@]}"; do
    twin=${p%-clang}
    estimate=${took[$twin]:-300}
    if fits "$estimate"; then run_preset "$p"; else skip "$p" "$estimate"; fi
done
if [[ $consumers == 1 ]]; then
    estimate=${took[consumers-static]:-120}
    if fits "$estimate"; then
        run_check consumers-shared env CC=gcc tools/check_consumers.sh --shared
    else
        skip consumers-shared "$estimate"
    fi
fi

printf '\n==== summary (%d s in all; budget %d min)\n' "$((SECONDS - start_all))" "$budget_min"
printf '  %s\n' "${summary[@]}"
if [[ $failed != 0 ]]; then
    echo "test.sh: FAILED"
    exit 1
fi
echo "test.sh: all passed"
