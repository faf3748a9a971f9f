#!/usr/bin/env bash
# check_headers.sh: every public header compiles on its own, as C11 (gcc and clang) and as C++17
# and C++20 (g++ and clang++), with -Wall -Wextra -Wpedantic -Werror: engines include weft from
# C++ translation units. include/weft.hpp, the C++ layer, is compiled as C++17 and C++20 only.
# A compiler that is not installed is reported and skipped; none at all for a language is a
# failure.
# Usage: tools/check_headers.sh <generated include dir>   (the build tree's include/, which
#        holds weft/version.h; tools/test.sh passes the first preset's)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
gen=${1:?usage: check_headers.sh <build include dir holding weft/version.h>}
[[ -f $gen/weft/version.h ]] || { echo "check_headers: no $gen/weft/version.h (build first)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

headers=("$root"/include/weft.h "$root"/include/weft/*.h)
cxx_headers=("$root"/include/weft.hpp) # C++ only
flags=(-Wall -Wextra -Wpedantic -Werror -fsyntax-only -I"$root/include" -I"$gen")
fail=0 ran_c=0 ran_cxx=0

check() { # check <compiler> <language flag...>
    local cc=$1
    shift
    if ! command -v "$cc" >/dev/null 2>&1; then
        echo "check_headers: $cc not installed, skipped"
        return 0
    fi
    local list=("${headers[@]}")
    [[ " $* " == *" -x c++ "* ]] && list+=("${cxx_headers[@]}")
    for h in "${list[@]}"; do
        local name=${h#"$root"/include/}
        if ! printf '#include <%s>\n#include <%s>\n' "$name" "$name" |
            "$cc" "$@" "${flags[@]}" - 2>"$tmp/err"; then
            echo "check_headers: $name does not compile with $cc $*:" >&2
            cat "$tmp/err" >&2
            fail=1
        fi
    done
    echo "check_headers: $cc $*: ${#list[@]} headers"
    return 0
}

for cc in gcc clang; do
    command -v "$cc" >/dev/null 2>&1 && ran_c=1
    check "$cc" -x c -std=c11
done
for cxx in g++ clang++; do
    command -v "$cxx" >/dev/null 2>&1 && ran_cxx=1
    check "$cxx" -x c++ -std=c++17
    check "$cxx" -x c++ -std=c++20
done
[[ $ran_c == 1 && $ran_cxx == 1 ]] || { echo "check_headers: need a C and a C++ compiler" >&2; fail=1; }
[[ $fail == 0 ]] && echo "check_headers: ok"
exit "$fail"
