#!/usr/bin/env bash
# check_layers.sh: fails when an #include breaks the layering (STYLE.md section 1):
#   1. jobs/ and the job-system public headers (weft/base.h, weft/jobs.h) include nothing
#      from src/ and no ECS header: jobs/ may include only system headers, its own files,
#      and weft/base.h, weft/jobs.h, weft/version.h.
#   2. No file outside jobs/ includes <pthread.h>, <stdatomic.h> or <threads.h>: checked in
#      include/ src/ bench/ tools/. Tests are exempt unless --tests is given: concurrency
#      tests create raw threads and count with raw atomics on purpose, as an oracle that
#      does not share code with what it checks.
#   3. Inside jobs/, only jobs/atomic.h includes <stdatomic.h>.
# Usage: tools/check_layers.sh [--tests] [source root]   (default: the tree this script is in)
set -euo pipefail

scan_tests=0
if [[ ${1:-} == --tests ]]; then
    scan_tests=1
    shift
fi
root=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
cd "$root"
fail=0
violation() { echo "check_layers: $*" >&2; fail=1; }

# Prints "file:line:<include target>" for every #include in the given files.
includes() {
    [[ $# -eq 0 ]] && return 0
    grep -HnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]' "$@" \
        | sed -E 's/^([^:]+:[0-9]+):[[:space:]]*#[[:space:]]*include[[:space:]]*([<"][^>"]*[>"]).*/\1:\2/'
}
files_under() {
    local d
    for d in "$@"; do
        [[ -d $d ]] && find "$d" -type f \( -name '*.c' -o -name '*.h' \) -print
    done | sort
}

# ---- rule 1: the job system depends on nothing above it
mapfile -t jobs_files < <(files_under jobs)
jobs_files+=(include/weft/base.h include/weft/jobs.h)
src_names=$(files_under src | xargs -r -n1 basename | sort -u)
while IFS= read -r hit; do
    [[ -z $hit ]] && continue
    where=${hit%:*}
    target=${hit##*:}
    name=${target:1:${#target}-2}
    case "$target" in
        \<*\>) continue ;; # system header
        \"weft/base.h\" | \"weft/jobs.h\" | \"weft/version.h\") continue ;;
        \"weft/*\" | \"weft.h\") violation "$where includes $target: jobs/ may use only weft/base.h and weft/jobs.h"; continue ;;
        *src/*) violation "$where includes $target from src/"; continue ;;
    esac
    dir=$(dirname "${where%%:*}")
    if [[ -f $dir/$name ]]; then
        continue # a file beside it in jobs/
    fi
    if grep -qxF "$(basename "$name")" <<<"$src_names"; then
        violation "$where includes $target, which lives in src/"
    else
        violation "$where includes $target, which is not in jobs/"
    fi
done < <(includes "${jobs_files[@]}")

# ---- rule 2: threads and atomics only through the jobs/ wrappers
other_dirs=(include src bench tools)
[[ $scan_tests == 1 ]] && other_dirs+=(tests)
mapfile -t other_files < <(files_under "${other_dirs[@]}")
while IFS= read -r hit; do
    [[ -z $hit ]] && continue
    case "${hit##*:}" in
        '<pthread.h>' | '<stdatomic.h>' | '<threads.h>')
            violation "${hit%:*} includes ${hit##*:}: only jobs/ may (use the wrappers in jobs/)" ;;
    esac
done < <(includes "${other_files[@]}")

# ---- rule 3: <stdatomic.h> only in jobs/atomic.h
while IFS= read -r hit; do
    [[ -z $hit ]] && continue
    if [[ ${hit##*:} == '<stdatomic.h>' && ${hit%%:*} != jobs/atomic.h ]]; then
        violation "${hit%:*} includes <stdatomic.h>: use the named-order wrappers in jobs/atomic.h"
    fi
done < <(includes "${jobs_files[@]}")

if [[ $fail != 0 ]]; then
    echo "check_layers: FAILED (see STYLE.md section 1: jobs/ -> src/, wrappers only in jobs/)" >&2
    exit 1
fi
echo "check_layers: ok (${#jobs_files[@]} job-system files, ${#other_files[@]} other files checked)"
