#!/usr/bin/env bash
# check_consumers.sh: proves the three ways to consume weft. Builds weft (Release, -O2),
# installs it into a temporary prefix, then builds and runs tests/consumers/:
#   subdir        add_subdirectory(<weft source>)
#   find_package  find_package(weft CONFIG) with CMAKE_PREFIX_PATH=<prefix>
#   pkgconfig     make + pkg-config --cflags --libs --static weft
# Usage: tools/check_consumers.sh [--shared] [--keep]
#   --shared  build weft as shared libraries (BUILD_SHARED_LIBS=ON)
#   --keep    keep the scratch directory (printed at the end)
# Honours CC (default: the system cc). Exits non-zero on the first failure.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
shared=OFF
keep=0
for arg in "$@"; do
    case "$arg" in
        --shared) shared=ON ;;
        --keep) keep=1 ;;
        -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
        *) echo "check_consumers.sh: unknown option '$arg'" >&2; exit 2 ;;
    esac
done

work=$(mktemp -d "${TMPDIR:-/tmp}/weft-consumers.XXXXXX")
cleanup() {
    if [[ $keep == 1 ]]; then echo "check_consumers: kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

gen=()
if command -v ninja >/dev/null 2>&1; then gen=(-G Ninja); fi
prefix="$work/prefix"
step() { printf '\n---- check_consumers: %s\n' "$*"; }

step "build and install weft (Release, shared=$shared) into $prefix"
cmake -S "$root" -B "$work/weft" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_FLAGS_RELEASE="-O2 -DNDEBUG" \
    -DWEFT_BUILD_TESTS=OFF -DWEFT_BUILD_BENCH=OFF -DWEFT_BUILD_TOOLS=OFF \
    -DBUILD_SHARED_LIBS="$shared" -DCMAKE_INSTALL_PREFIX="$prefix" >"$work/weft-configure.log" \
    || { cat "$work/weft-configure.log"; exit 1; }
cmake --build "$work/weft" -j2
cmake --install "$work/weft" >"$work/install.log" || { cat "$work/install.log"; exit 1; }
echo "installed: $(cd "$prefix" && find . -type f | sort | tr '\n' ' ')"

# The runtime linker must find shared weft libraries in the scratch prefix.
libdir=$(dirname "$(find "$prefix" -name 'libweft_jobs.*' | head -n1)")
export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

step "consumer 1: add_subdirectory"
cmake -S "$root/tests/consumers/subdir" -B "$work/subdir" "${gen[@]}" \
    -DCMAKE_BUILD_TYPE=Release -DWEFT_SOURCE_DIR="$root" -DBUILD_SHARED_LIBS="$shared" \
    >"$work/subdir-configure.log" || { cat "$work/subdir-configure.log"; exit 1; }
cmake --build "$work/subdir" -j2
"$work/subdir/consumer"

step "consumer 2: find_package(weft CONFIG)"
cmake -S "$root/tests/consumers/find_package" -B "$work/find_package" "${gen[@]}" \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix"
cmake --build "$work/find_package" -j2
"$work/find_package/consumer"

step "consumer 3: pkg-config (weft.pc)"
pcdir=$(dirname "$(find "$prefix" -name weft.pc | head -n1)")
export PKG_CONFIG_PATH="$pcdir"
echo "pkg-config weft $(pkg-config --modversion weft): $(pkg-config --cflags --libs --static weft)"
cp -r "$root/tests/consumers/pkgconfig" "$work/pkgconfig"
make -C "$work/pkgconfig" --no-print-directory CC="${CC:-cc}"
"$work/pkgconfig/consumer"

step "all three consumers built and ran (shared=$shared)"
