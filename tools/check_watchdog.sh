#!/usr/bin/env bash
# check_watchdog.sh: proves that a hung test prints every thread's stack before it is stopped.
# Runs three deliberately hanging programs and checks their output:
#   1. weft_rel_hang (watchdog timer, gdb dump):       >= 3 threads with frames in weft
#      and with a gdb that hangs while attached: killed after WT_WATCHDOG_GDB_SECONDS, then
#      the backtrace() fallback, all well within the limit
#   2. weft_rel_hang with WT_WATCHDOG_NO_GDB=1 (backtrace() fallback): >= 3 thread stacks
#   3. weft_rel_hang_criterion (Criterion's .timeout -> SIGPROF -> dump): stacks + "Timed out"
# Each must also exit non-zero. Usage: tools/check_watchdog.sh <weft_rel_hang> <weft_rel_hang_criterion>
set -uo pipefail

hang=${1:?usage: check_watchdog.sh <weft_rel_hang> <weft_rel_hang_criterion>}
hang_cr=${2:?usage: check_watchdog.sh <weft_rel_hang> <weft_rel_hang_criterion>}
out=$(mktemp)
fake=$(mktemp -d)
trap 'rm -rf "$out" "$fake"' EXIT
fail=0
section_fail=0
# A hung program is sent SIGTERM after the limit, then SIGKILL 10 s later: a process that gdb
# has attached to (and stopped) never sees SIGTERM if gdb itself hangs. Exit status 124 or
# 137 means the program was stopped by this limit, not by its own watchdog.
limit() { timeout -k 10 "$@"; }
timed_out() { [[ $1 -eq 124 || $1 -eq 137 ]]; }
bad() { section_fail=1; echo "check_watchdog: FAIL: $*" >&2; sed 's/^/    | /' "$out" | tail -40 >&2; fail=1; }

# Under ThreadSanitizer (its options are in the environment) signals to threads blocked in the
# kernel are deferred, so the fallback reaches only the thread running the dump, and the
# Criterion hook is compiled out (see tests/support/watchdog.c).
tsan=0
[[ -n ${TSAN_OPTIONS-} ]] && tsan=1
want=3
[[ $tsan -eq 1 ]] && want=1

# 1. gdb path (skipped with a note when gdb is missing: the fallback below still runs)
if command -v gdb >/dev/null; then
    # gdb normally answers in seconds; on a loaded machine attaching to a sanitized process
    # once took over 30 s, so this case gives it 90 s before the watchdog falls back.
    WT_WATCHDOG_GDB_SECONDS=${WT_WATCHDOG_GDB_SECONDS:-90} limit 150 "$hang" 2 >"$out" 2>&1
    rc=$?
    threads=$(grep -c '^Thread [0-9]' "$out")
    if [[ $rc -eq 0 ]] || timed_out $rc; then
        bad "gdb mode: exit status $rc (want a non-zero abort, not a kill by timeout)"
    fi
    grep -q 'still running after 2 s' "$out" || bad "gdb mode: no watchdog message"
    grep -q 'gdb timed out' "$out" && bad "gdb mode: gdb hung while attached (killed by the watchdog)"
    [[ $threads -ge 3 ]] || bad "gdb mode: $threads thread stacks (want >= 3)"
    grep -q 'weft_counter_wait\|block_forever' "$out" || bad "gdb mode: no weft frame in the stacks"
    [[ $section_fail -eq 0 ]] && echo "check_watchdog: gdb mode ok ($threads thread stacks, exit $rc)"
    section_fail=0
    # A gdb that hangs while attached stops the whole program: the watchdog must kill it from
    # outside and still fail fast. Two stand-ins for gdb: the real one sleeping after its
    # backtraces, and one that hangs mid-attach (PTRACE_ATTACH sends SIGSTOP; it never waits
    # for it, so after its death the program would stay stopped without the watchdog's SIGCONT).
    if gdb -nx -batch -ex 'python print(1)' >/dev/null 2>&1; then
        gdb_exe=$(command -v gdb)
        for how in after-backtraces mid-attach; do
            if [[ $how == after-backtraces ]]; then
                printf '#!/bin/sh\nexec %q "$@" -ex "python import time; time.sleep(600)"\n' \
                    "$gdb_exe" >"$fake/gdb"
            else
                py='import ctypes, time; ctypes.CDLL(None).ptrace(16, $2, 0, 0); time.sleep(600)'
                printf '#!/bin/sh\nwhile [ "$1" != -p ]; do shift; done\nexec %q -nx -batch -ex "python %s"\n' \
                    "$gdb_exe" "$py" >"$fake/gdb"
            fi
            chmod +x "$fake/gdb"
            start=$SECONDS
            PATH="$fake:$PATH" WT_WATCHDOG_GDB_SECONDS=5 limit 60 "$hang" 2 >"$out" 2>&1
            rc=$?
            took=$((SECONDS - start))
            threads=$(grep -c '^--- thread [0-9]* ---' "$out")
            if [[ $rc -eq 0 ]] || timed_out $rc; then bad "gdb hang $how: exit status $rc"; fi
            grep -q 'gdb timed out' "$out" || bad "gdb hang $how: no 'gdb timed out' message"
            [[ $threads -ge $want ]] || bad "gdb hang $how: $threads fallback stacks (want >= $want)"
            [[ $section_fail -eq 0 ]] && echo "check_watchdog: gdb hang $how ok (killed after 5 s," \
                "$threads fallback stacks, exit $rc, ${took} s)"
            section_fail=0
        done
    else
        echo "check_watchdog: gdb has no python: gdb hang checks skipped"
    fi
else
    echo "check_watchdog: gdb not installed: gdb mode skipped"
fi

# 2. backtrace() fallback
WT_WATCHDOG_NO_GDB=1 limit 120 "$hang" 2 >"$out" 2>&1
rc=$?
threads=$(grep -c '^--- thread [0-9]* ---' "$out")
if [[ $rc -eq 0 ]] || timed_out $rc; then bad "fallback mode: exit status $rc"; fi
[[ $threads -ge $want ]] || bad "fallback mode: $threads thread stacks (want >= $want)"
[[ $section_fail -eq 0 ]] && echo "check_watchdog: backtrace mode ok ($threads thread stacks, exit $rc)"
section_fail=0

# 3. Criterion's own timeout
if [[ $tsan -eq 1 ]]; then
    echo "check_watchdog: ThreadSanitizer build: criterion mode skipped (hook compiled out)"
    exit $fail
fi
limit 180 "$hang_cr" -j1 >"$out" 2>&1
rc=$?
if [[ $rc -eq 0 ]] || timed_out $rc; then bad "criterion mode: exit status $rc"; fi
grep -q 'SIGPROF' "$out" || bad "criterion mode: the timeout did not reach the watchdog"
grep -qi 'timed out' "$out" || bad "criterion mode: Criterion did not report a timeout"
n=$(grep -c '^Thread [0-9]\|^--- thread [0-9]* ---' "$out")
[[ $n -ge 3 ]] || bad "criterion mode: $n thread stacks (want >= 3)"
[[ $section_fail -eq 0 ]] && echo "check_watchdog: criterion mode ok ($n thread stacks, exit $rc)"

exit $fail
