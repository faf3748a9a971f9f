#!/usr/bin/env bash
# check_format.sh: checks weft's one C style (docs/architecture.md, "Style") on the sources.
#   1. .editorconfig basics on every tracked text file kind (.c .h .cmake .txt .md .sh .json):
#      LF line ends, a final newline, no trailing spaces (Markdown exempt), no tabs in C.
#   2. clang-format --dry-run (.clang-format: 4 spaces, 100 columns, `int *p`, attached
#      braces) on every .c/.h/.cpp/.hpp file: any difference fails.
#   3. Braces around every if/else/for/while/switch body. clang-format 14 cannot add them, so
#      this catches the visible form: a control line (formatted) that ends at its closing
#      parenthesis, or a lone `else`. The tree was converted once with clang-tidy's
#      readability-braces-around-statements (see --fix).
# Usage: tools/check_format.sh [--fix]
#   default   exits 1 on any deviation of the three kinds (the test command runs it)
#   --fix     rewrites the C files with clang-format -i first (review the diff before
#             committing); missing braces: run-clang-tidy -p build/dev -fix
#             -checks='-*,readability-braces-around-statements'
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
fix=0
for arg in "$@"; do
    case "$arg" in
        --strict) ;; # the default now; kept so older invocations still work
        --fix) fix=1 ;;
        -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
        *) echo "check_format.sh: unknown option '$arg'" >&2; exit 2 ;;
    esac
done

mapfile -t cfiles < <(find include jobs src tests bench tools -type f \( -name '*.c' -o -name '*.h' \
    -o -name '*.cpp' -o -name '*.hpp' \) | sort)
mapfile -t textfiles < <(find . -path ./build -prune -o -path ./.git -prune -o -type f \
    \( -name '*.c' -o -name '*.h' -o -name '*.cpp' -o -name '*.hpp' -o -name '*.cmake' -o -name '*.in' -o -name 'CMakeLists.txt' \
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
    echo "format: clang-format not installed (tools/deps.sh installs it); the style cannot be checked"
    unformatted=1
fi

# Rule 3: a control statement whose line ends at its parenthesis has no brace (attached
# braces put `{` on that line); `else` alone on a line likewise.
mapfile -t braceless < <(grep -nE \
    '^[[:space:]]*((\} )?else )?(if|for|while|switch) ?\(.*\)[[:space:]]*(//.*|/\*.*\*/)?$|^[[:space:]]*(\} )?else[[:space:]]*$' \
    "${cfiles[@]}" | grep -vE '^[^:]+:[0-9]+:[[:space:]]*#' || true)
for hit in "${braceless[@]}"; do
    echo "format: ${hit%%:*}:$(cut -d: -f2 <<<"$hit"): a control statement without braces"
done

echo "check_format: ${#textfiles[@]} files: $bad .editorconfig deviations," \
    "${unformatted:-0} C files differ from clang-format, ${#braceless[@]} bodies without braces"
if [[ $bad -gt 0 || ${unformatted:-0} -gt 0 || ${#braceless[@]} -gt 0 ]]; then
    exit 1
fi
