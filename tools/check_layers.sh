#!/usr/bin/env bash
# check_layers.sh: fails when an #include breaks the layering of docs/architecture.md.
#
# The library's folders are its layers; a file may include system headers, files of its own
# folder, and what its layer allows below it (private headers by their path from the project
# root, public ones as "weft/..."):
#   jobs/platform/  layer 0  weft/base.h, weft/version.h
#   jobs/           layer 1  + weft/jobs.h, jobs/platform/*
#   src/core/       layer 2  + every public header, jobs/platform/*
#   src/sched/      layer 3  + src/core/*
#   src/hier/       layer 3  + src/core/*
#   src/io/         layer 4  + src/core/*, src/hier/*
#   include/weft/   public   other public headers only; base.h, jobs.h and version.h include
#                            no ECS header (the job system stands alone)
#   bench/, tools/  users    public headers only (tools/fuzz/gen_corpus.c may read the
#                            archive format, src/io/archive_format.h, to write checksums)
# Private jobs/ headers (jobs_impl.h, deque.h) are for jobs/ alone. Dependencies therefore
# only point down and no two folders include each other. Within a folder, a cycle of
# header includes fails too.
# Threads and atomics: only jobs/platform/thread.h may include <pthread.h> or <threads.h>,
# only jobs/platform/atomic.h <stdatomic.h>; tests are exempt unless --tests is given
# (concurrency tests count with raw atomics on purpose, as an oracle that shares no code
# with what it checks).
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
        [[ -d $d ]] && find "$d" -type f \( -name '*.c' -o -name '*.h' -o -name '*.cpp' -o -name '*.hpp' \) -print
    done | sort
}

# The layer of a file: platform jobs core sched hier io public user test.
layer_of() {
    case "$1" in
        jobs/platform/*) echo platform ;;
        jobs/*) echo jobs ;;
        src/core/*) echo core ;;
        src/sched/*) echo sched ;;
        src/hier/*) echo hier ;;
        src/io/*) echo io ;;
        include/*) echo public ;;
        tests/*) echo test ;;
        *) echo user ;;
    esac
}

# Which private folders a layer may include from (besides its own folder).
allowed_private() {
    case "$1" in
        platform) echo "" ;;
        jobs) echo "jobs/platform" ;;
        core) echo "jobs/platform" ;;
        sched | hier) echo "jobs/platform src/core" ;;
        io) echo "jobs/platform src/core src/hier" ;;
        *) echo "" ;;
    esac
}

# ---- rule 1: every include in the library, the public headers, bench/ and tools/
mapfile -t lib_files < <(files_under jobs src include bench tools)
private_names=$(files_under jobs src | grep '\.h$' | xargs -r -n1 basename | sort -u)
checked=0
while IFS= read -r hit; do
    [[ -z $hit ]] && continue
    checked=$((checked + 1))
    file=${hit%%:*}
    where=${hit%:*}
    target=${hit##*:}
    name=${target:1:${#target}-2}
    dir=$(dirname "$file")
    layer=$(layer_of "$file")
    [[ $target == \<*\> ]] && continue # system header (rule 2 checks the threading ones)
    # a file of its own folder, by bare name
    if [[ $name != */* && -f $dir/$name ]]; then
        continue
    fi
    case "$name" in
        weft.h | weft/*)
            case "$layer" in
                platform)
                    [[ $name == weft/base.h || $name == weft/version.h ]] ||
                        violation "$where includes $target: the platform layer may use only weft/base.h" ;;
                jobs)
                    [[ $name == weft/base.h || $name == weft/jobs.h || $name == weft/version.h ]] ||
                        violation "$where includes $target: jobs/ may use only weft/base.h and weft/jobs.h" ;;
                public)
                    case "$file" in
                        include/weft/base.h | include/weft/jobs.h | include/weft/version.h)
                            [[ $name == weft/base.h || $name == weft/jobs.h || $name == weft/version.h ]] ||
                                violation "$where includes $target: the job-system headers include no ECS header" ;;
                    esac ;;
            esac
            continue ;;
    esac
    # bench/ and tools/ have include paths of their own; only the library's private headers
    # are off limits to them
    if [[ $layer == user && $name != src/* && $name != jobs/* ]]; then
        grep -qxF "$(basename "$name")" <<<"$private_names" &&
            violation "$where includes $target, a private header of the library"
        continue
    fi
    # a private header by its path from the root
    if [[ ! -f $name ]]; then
        violation "$where includes $target, which is neither beside it nor a path from the project root"
        continue
    fi
    tdir=$(dirname "$name")
    ok=0
    case "$layer" in
        public)
            violation "$where includes $target: public headers include no private header"
            continue ;;
        user)
            if [[ $file == tools/fuzz/gen_corpus.c && $name == src/io/archive_format.h ]]; then
                ok=1
            fi ;;
        *)
            [[ $tdir == "$dir" ]] && ok=1
            for a in $(allowed_private "$layer"); do
                [[ $tdir == "$a" ]] && ok=1
            done ;;
    esac
    [[ $ok == 1 ]] || violation "$where includes $target: layer '$layer' ($dir) may not depend on $tdir"
done < <(includes "${lib_files[@]}")

# ---- rule 2: threads and atomics only through the platform wrappers
scan=(jobs src include bench tools)
[[ $scan_tests == 1 ]] && scan+=(tests)
mapfile -t all_files < <(files_under "${scan[@]}")
while IFS= read -r hit; do
    [[ -z $hit ]] && continue
    file=${hit%%:*}
    case "${hit##*:}" in
        '<pthread.h>' | '<threads.h>')
            [[ $file == jobs/platform/thread.h || $file == jobs/platform/thread.c ]] ||
                violation "${hit%:*} includes ${hit##*:}: use jobs/platform/thread.h" ;;
        '<stdatomic.h>')
            [[ $file == jobs/platform/atomic.h ]] ||
                violation "${hit%:*} includes <stdatomic.h>: use the named-order wrappers in jobs/platform/atomic.h" ;;
    esac
done < <(includes "${all_files[@]}")

# ---- rule 3: no cycle of header includes inside a folder
# Edges "a b": header a includes header b (both private, same folder or by root path).
mapfile -t headers < <(files_under jobs src | grep '\.h$')
edges=$(
    for h in "${headers[@]}"; do
        while IFS= read -r hit; do
            [[ -z $hit ]] && continue
            t=${hit##*:}
            [[ $t == \"*\" ]] || continue
            n=${t:1:${#t}-2}
            if [[ $n != */* && -f $(dirname "$h")/$n ]]; then
                echo "$h $(dirname "$h")/$n"
            elif [[ -f $n && $n == *.h ]]; then
                echo "$h $n"
            fi
        done < <(includes "$h")
    done
)
for h in "${headers[@]}"; do
    # every header reachable from h; a cycle when h is among them
    frontier=("$h")
    seen=" "
    while [[ ${#frontier[@]} -gt 0 ]]; do
        next=()
        for f in "${frontier[@]}"; do
            while read -r a b; do
                [[ $a == "$f" ]] || continue
                if [[ $b == "$h" ]]; then
                    violation "$h is part of an include cycle (through $f)"
                    next=()
                    break 3
                fi
                [[ $seen == *" $b "* ]] && continue
                seen+="$b "
                next+=("$b")
            done <<<"$edges"
        done
        frontier=("${next[@]+"${next[@]}"}")
    done
done

if [[ $fail != 0 ]]; then
    echo "check_layers: FAILED (the layers and their rules: docs/architecture.md, top of this script)" >&2
    exit 1
fi
echo "check_layers: ok (${#lib_files[@]} files, $checked includes, ${#headers[@]} private headers checked)"
