#!/usr/bin/env bash
# check_consumers.sh: proves the three ways to consume weft. Builds weft (Release, -O2),
# installs it into a temporary prefix, then builds and runs tests/consumers/:
#   subdir        add_subdirectory(<weft source>)
#   find_package  find_package(weft CONFIG) with CMAKE_PREFIX_PATH=<prefix>
#   pkgconfig     make + pkg-config --cflags --libs --static weft
# All three build the one source file tests/consumers/common/main.c; subdir and find_package
# also build and run tests/consumers/common/main.cpp, which uses the C++ layer (weft.hpp,
# installed with the headers) with -fno-exceptions -fno-rtti. The installed package
# files (weftTargets*.cmake, weft.pc) and the consumers' compile and link commands must not
# carry -fsanitize. Without --shared it also installs a weft built with WEFT_SANITIZER=
# address,undefined and checks that neither its package files nor the commands CMake and
# pkg-config generate for a consumer of it pass -fsanitize on (the sanitizer flags are
# weft's own build settings, not part of its interface).
# Usage: tools/check_consumers.sh [--shared] [--keep]
#   --shared  build weft as shared libraries (BUILD_SHARED_LIBS=ON)
#   --keep    keep the scratch directory (printed at the end)
# Honours CC (default: the system cc) and CXX. Exits non-zero on the first failure.
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

# no_sanitizer_flags <what> <files or text...>: fails when -fsanitize appears.
no_sanitizer_flags() {
    local what=$1
    shift
    if grep -n -- '-fsanitize' "$@"; then
        echo "check_consumers: FAIL: -fsanitize in $what, which consumers would inherit (lines above)" >&2
        exit 1
    fi
    echo "check_consumers: no -fsanitize in $what"
}
build_commands() { # the compile and link commands of build directory $1, all targets
    if [[ -f $1/build.ninja ]]; then
        ninja -C "$1" -t commands
    else
        make -C "$1" -n -B --no-print-directory
    fi
}
installed_package_files() { # the files a consumer of prefix $1 reads
    find "$1" \( -name 'weft*.cmake' -o -name weft.pc \) -type f | sort
}
mapfile -t pkgfiles < <(installed_package_files "$prefix")
no_sanitizer_flags "the installed package files (${pkgfiles[*]#"$prefix"/})" "${pkgfiles[@]}"

step "consumer 1: add_subdirectory"
cmake -S "$root/tests/consumers/subdir" -B "$work/subdir" "${gen[@]}" \
    -DCMAKE_BUILD_TYPE=Release -DWEFT_SOURCE_DIR="$root" -DBUILD_SHARED_LIBS="$shared" \
    >"$work/subdir-configure.log" || { cat "$work/subdir-configure.log"; exit 1; }
cmake --build "$work/subdir" -j2
"$work/subdir/consumer"
"$work/subdir/consumer_cpp"

step "consumer 2: find_package(weft CONFIG)"
cmake -S "$root/tests/consumers/find_package" -B "$work/find_package" "${gen[@]}" \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix"
cmake --build "$work/find_package" -j2
"$work/find_package/consumer"
"$work/find_package/consumer_cpp"
build_commands "$work/find_package" >"$work/find_package.commands"
no_sanitizer_flags "the find_package consumer's compile and link commands" \
    "$work/find_package.commands"

step "consumer 3: pkg-config (weft.pc)"
pcdir=$(dirname "$(find "$prefix" -name weft.pc | head -n1)")
export PKG_CONFIG_PATH="$pcdir"
echo "pkg-config weft $(pkg-config --modversion weft): $(pkg-config --cflags --libs --static weft)"
cp -r "$root/tests/consumers/pkgconfig" "$root/tests/consumers/common" "$work/"
make -C "$work/pkgconfig" --no-print-directory CC="${CC:-cc}"
"$work/pkgconfig/consumer"

step "all three consumers built and ran (shared=$shared)"

if [[ $shared == OFF ]]; then
    # A sanitized weft, installed: its static libraries need the sanitizer runtime, but that
    # is for whoever installs such a build to add; the package must not force it on.
    san_prefix="$work/prefix-asan"
    step "sanitizer flags stay inside weft's build (WEFT_SANITIZER=address,undefined, installed into $san_prefix)"
    cmake -S "$root" -B "$work/weft-asan" "${gen[@]}" -DCMAKE_BUILD_TYPE=Debug \
        -DWEFT_SANITIZER=address,undefined \
        -DWEFT_BUILD_TESTS=OFF -DWEFT_BUILD_BENCH=OFF -DWEFT_BUILD_TOOLS=OFF \
        -DCMAKE_INSTALL_PREFIX="$san_prefix" >"$work/weft-asan-configure.log" \
        || { cat "$work/weft-asan-configure.log"; exit 1; }
    cmake --build "$work/weft-asan" -j2 >"$work/weft-asan-build.log" \
        || { tail -n 40 "$work/weft-asan-build.log"; exit 1; }
    cmake --install "$work/weft-asan" >"$work/weft-asan-install.log" \
        || { cat "$work/weft-asan-install.log"; exit 1; }
    # (Into a file: grep -q on a pipe would end the pipeline early, and pipefail would see
    # the writer's SIGPIPE.)
    build_commands "$work/weft-asan" >"$work/weft-asan.commands"
    grep -q -- '-fsanitize=address' "$work/weft-asan.commands" \
        || { echo "check_consumers: FAIL: the sanitized weft was not built with -fsanitize" >&2; exit 1; }
    mapfile -t pkgfiles < <(installed_package_files "$san_prefix")
    no_sanitizer_flags "the sanitized install's package files" "${pkgfiles[@]}"
    # find_package: configure the consumer against it and read the commands it would run.
    cmake -S "$root/tests/consumers/find_package" -B "$work/find_package-asan" "${gen[@]}" \
        -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$san_prefix" \
        >"$work/find_package-asan.log" \
        || { cat "$work/find_package-asan.log"; exit 1; }
    build_commands "$work/find_package-asan" >"$work/find_package-asan.commands"
    no_sanitizer_flags "the find_package consumer's compile and link commands" \
        "$work/find_package-asan.commands"
    # pkg-config: the flags the Makefile would use.
    PKG_CONFIG_PATH=$(dirname "$(find "$san_prefix" -name weft.pc | head -n1)") \
        pkg-config --cflags --libs --static weft >"$work/pkgconfig-asan.flags"
    no_sanitizer_flags "pkg-config --cflags --libs --static weft ($(cat "$work/pkgconfig-asan.flags"))" \
        "$work/pkgconfig-asan.flags"
fi
