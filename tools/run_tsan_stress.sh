#!/usr/bin/env bash
# run_tsan_stress.sh: builds weft with ThreadSanitizer and runs the stress suites (ctest -L stress).
#
# Usage: tools/run_tsan_stress.sh [--preset NAME] [--build-dir DIR] [--compiler gcc|clang]
#                                 [--repeat N] [--label L] [--target T] [-- extra ctest args]
#   (default)        the "tsan" configure/build preset from CMakePresets.json (build/tsan);
#                    without presets, a plain build dir build/tsan-stress configured with
#                    -DWEFT_SANITIZER=thread -DCMAKE_BUILD_TYPE=RelWithDebInfo
#   --preset NAME    another preset, e.g. tsan-clang
#   --build-dir DIR  skip presets: configure DIR with the flags above (CC from --compiler)
#   --repeat N       run each stress test up to N times, stopping at the first failure
#   --label L        run label L instead of "stress" (e.g. "jobs", to put a module under TSan)
#   --target T       build only target T (repeatable) instead of everything, e.g. when an
#                    unrelated target is broken; the tests run must be among those built
#
# The run fails (exit 1) if the build fails, a test fails, no test carries the label (a stress
# run that ran nothing proves nothing), or "WARNING: ThreadSanitizer" appears anywhere in the
# output — TSan's exitcode=66 normally fails the test already; the grep catches reports from
# child processes whose exit status a test did not propagate. Exit 2: bad usage.
# Logs: build/logs/tsan-stress.log (build) and build/logs/tsan-stress-ctest.log (tests).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

preset=""
build_dir=""
compiler=""
repeat=1
label=stress
targets=()
extra=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --preset) preset=${2:?--preset needs a name}; shift 2 ;;
        --build-dir) build_dir=${2:?--build-dir needs a path}; shift 2 ;;
        --compiler) compiler=${2:?--compiler needs gcc or clang}; shift 2 ;;
        --repeat) repeat=${2:?--repeat needs a count}; shift 2 ;;
        --label) label=${2:?--label needs a name}; shift 2 ;;
        --target) targets+=(--target "${2:?--target needs a name}"); shift 2 ;;
        --) shift; extra=("$@"); break ;;
        -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
        *) echo "run_tsan_stress.sh: unknown argument '$1'" >&2; exit 2 ;;
    esac
done
if ! [[ $repeat =~ ^[1-9][0-9]*$ ]]; then
    echo "run_tsan_stress.sh: --repeat wants a positive count" >&2
    exit 2
fi
if [[ -n $preset && -n $build_dir ]]; then
    echo "run_tsan_stress.sh: give --preset or --build-dir, not both" >&2
    exit 2
fi

if [[ -x tools/deps.sh ]]; then
    tools/deps.sh test # installs Criterion etc. when missing and run as root; else only checks
fi

mkdir -p build/logs
log=build/logs/tsan-stress.log
: >"$log"

# Presets are used when available and not overridden: they carry the team's TSan settings.
if [[ -z $build_dir && -f CMakePresets.json ]] && grep -q '"name": *"'"${preset:-tsan}"'"' CMakePresets.json; then
    preset=${preset:-tsan}
    if [[ -n $compiler ]]; then
        [[ $compiler == clang ]] && preset=${preset%-clang}-clang || preset=${preset%-clang}
    fi
    build_dir=build/$preset
    echo "tsan-stress: configuring preset '$preset' into $build_dir (log: $log)"
    cmake --preset "$preset" >>"$log" 2>&1 || { tail -n 40 "$log"; echo "tsan-stress: configure failed" >&2; exit 1; }
    echo "tsan-stress: building (-j2)"
    cmake --build --preset "$preset" "${targets[@]}" >>"$log" 2>&1 || { tail -n 60 "$log"; echo "tsan-stress: build failed" >&2; exit 1; }
else
    if [[ -n $preset ]]; then
        echo "run_tsan_stress.sh: preset '$preset' not found in CMakePresets.json" >&2
        exit 2
    fi
    build_dir=${build_dir:-build/tsan-stress}
    cc=${compiler:-${CC:-cc}}
    echo "tsan-stress: configuring $build_dir with -DWEFT_SANITIZER=thread (CC=$cc, log: $log)"
    CC=$cc cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWEFT_SANITIZER=thread \
        -DWEFT_DEBUG_LEVEL=2 -DWEFT_BUILD_TESTS=ON >>"$log" 2>&1 \
        || { tail -n 40 "$log"; echo "tsan-stress: configure failed" >&2; exit 1; }
    echo "tsan-stress: building (-j2)"
    cmake --build "$build_dir" -j2 "${targets[@]}" >>"$log" 2>&1 || { tail -n 60 "$log"; echo "tsan-stress: build failed" >&2; exit 1; }
fi

# A label nobody carries would make ctest succeed having run nothing.
count=$(ctest --test-dir "$build_dir" -N -L "$label" | sed -n 's/^Total Tests: *//p')
if [[ -z $count || $count -eq 0 ]]; then
    echo "tsan-stress: no test in $build_dir carries the label '$label'" >&2
    exit 1
fi

ctest_log=build/logs/tsan-stress-ctest.log
echo "tsan-stress: running $count test(s) labelled '$label' under ThreadSanitizer (repeat until fail: $repeat)"
status=0
ctest --test-dir "$build_dir" -L "$label" --output-on-failure -j1 \
    --repeat "until-fail:$repeat" "${extra[@]}" 2>&1 | tee "$ctest_log" || status=1
# Criterion prints each suite's output only on failure with --output-on-failure; rerun the
# verbose log check on what ctest kept (LastTest.log holds every test's full output).
last=$build_dir/Testing/Temporary/LastTest.log
if grep -q "WARNING: ThreadSanitizer" "$ctest_log" ${last:+"$last"} 2>/dev/null; then
    echo "tsan-stress: ThreadSanitizer reported a problem (see $last)" >&2
    status=1
fi
if [[ $status -ne 0 ]]; then
    echo "tsan-stress: FAILED" >&2
    exit 1
fi
echo "tsan-stress: all $count test(s) passed with no ThreadSanitizer report"
