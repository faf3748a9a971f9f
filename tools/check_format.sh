#!/usr/bin/env bash
# check_format.sh: checks the formatting rules of STYLE.md section 7 on the C sources.
#   1. .editorconfig basics on every tracked text file kind (.c .h .cmake .txt .md .sh .json):
#      LF line ends, a final newline, no trailing spaces (Markdown exempt), no tabs in C.
#   2. clang-format --dry-run (.clang-format: 4 spaces, 100 columns, `int *p`) on .c/.h files.
# Usage: tools/check_format.sh [--strict] [--fix]
#   default   exits 1 on an .editorconfig deviation; clang-format differences are only listed
#             (advisory, as tools/test.sh runs it, until the tree has been formatted once)
#   --strict  clang-format differences fail too
#   --fix     rewrites the C files with clang-format -i (review the diff before committing)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
strict=0
fix=0
for arg in "$@"; do
    case "$arg" in
        --strict) strict=1 ;;
        --fix) fix=1 ;;
        -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
        *) echo "check_format.sh: unknown option '$arg'" >&2; exit 2 ;;
    esac
done

mapfile -t cfiles < <(find include jobs src tests bench tools -type f \( -name '*.c' -o -name '*.h' \) | sort)
mapfile -t textfiles < <(find . -path ./build -prune -o -path ./.git -prune -o -type f \
    \( -name '*.c' -o -name '*.h' -o -name '*.cmake' -o -name '*.in' -o -name 'CMakeLists.txt' \
       -o -name '*.md' -o -name '*.sh' -o -name '*.json' \) -print | sort)

bad=0
for f in "${textfiles[@]}"; do
    if grep -q $'\r' "$f"; then echo "format: $f: CRLF line ends"; bad=$((bad + 1)); fi
    if [[ -s $f && $(tail -c1 "$f" | od -An -c | tr -d ' ') != '\n' ]]; then
        echo "format: $f: no final newline"; bad=$((bad + 1))
    fi
    if [[ $f != *.md ]] && grep -nE '[[:space:]]+$' "$f" | head -n3 | sed "s|^|format: $f:|;s|$| (trailing space)|" | grep .; then
        bad=$((bad + 1))
    fi
done
for f in "${cfiles[@]}"; do
    if grep -q $'\t' "$f"; then echo "format: $f: tab characters"; bad=$((bad + 1)); fi
done

if command -v clang-format >/dev/null 2>&1; then
    if [[ $fix == 1 ]]; then
        clang-format -i "${cfiles[@]}"
    fi
    # One clang-format run over every file; its warnings start with "<file>:<line>:<col>:".
    mapfile -t differing < <(clang-format --dry-run "${cfiles[@]}" 2>&1 \
        | sed -nE 's/^([^:]+):[0-9]+:[0-9]+: warning:.*/\1/p' | sort | uniq -c)
    unformatted=${#differing[@]}
    for line in "${differing[@]}"; do
        read -r n f <<<"$line"
        echo "format: $f: $n clang-format differences (clang-format --dry-run $f)"
    done
else
    echo "format: clang-format not installed; skipped the clang-format check"
fi

echo "check_format: ${#textfiles[@]} files: $bad .editorconfig deviations," \
    "${unformatted:-0} C files differ from clang-format"
if [[ $bad -gt 0 || ($strict == 1 && ${unformatted:-0} -gt 0) ]]; then
    exit 1
fi
