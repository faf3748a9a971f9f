#!/usr/bin/env bash
# deps.sh: makes sure the build and test dependencies are installed (Debian/Ubuntu).
# Usage: tools/deps.sh [build|demo|test]
#   build  what the release build and weft_bench need: cmake, ninja, gcc, make, pkg-config
#   demo   build, plus the optional graphviz (its `dot` draws the demo's schedule.svg): tried
#          when root, never required; without it the demo writes schedule.dot only
#   test   (default) also clang with its sanitizer runtimes, Criterion, libomp for clang,
#          clang-format and gdb
# Installs only what is missing, and only as root (apt-get update; apt-get install -y ...);
# as another user it prints the apt-get command and exits 1. Prints nothing else when all
# is present.
set -euo pipefail

kind=${1:-test}
packages=(cmake ninja-build gcc make libc6-dev pkg-config)
optional=()
if [[ $kind == demo ]]; then
    optional+=(graphviz)
elif [[ $kind == test ]]; then
    # libclang-rt-dev: clang's ASan/UBSan/TSan runtimes (only recommended by clang);
    # llvm: llvm-symbolizer for readable sanitizer stacks; libomp-dev: clang's OpenMP;
    # gdb: the hang watchdog's stack dump of every thread (tools/check_watchdog.sh).
    # g++: tools/check_headers.sh compiles every public header as C++ too.
    packages+=(clang libclang-rt-dev llvm libomp-dev libcriterion-dev clang-format gdb g++)
elif [[ $kind != build ]]; then
    echo "deps.sh: unknown kind '$kind' (build or test)" >&2
    exit 2
fi

missing=()
if command -v dpkg-query >/dev/null 2>&1; then
    for p in "${packages[@]}"; do
        if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
            missing+=("$p")
        fi
    done
else
    # Not a Debian system: check the commands and hope the libraries are there.
    for c in cmake ninja cc make pkg-config; do
        command -v "$c" >/dev/null 2>&1 || missing+=("$c")
    done
    if [[ $kind == test ]]; then
        command -v clang >/dev/null 2>&1 || missing+=(clang)
        pkg-config --exists criterion 2>/dev/null || missing+=(criterion)
    fi
    if [[ ${#missing[@]} -gt 0 ]]; then
        echo "deps.sh: missing ${missing[*]}; install them with your package manager" >&2
        exit 1
    fi
    exit 0
fi

# Optional packages: installed when possible, a one-line note when not, never a failure.
install_optional() {
    local want=()
    [[ ${#optional[@]} -eq 0 ]] && return 0
    for p in "${optional[@]}"; do
        if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
            want+=("$p")
        fi
    done
    [[ ${#want[@]} -eq 0 ]] && return 0
    if [[ $(id -u) -ne 0 ]]; then
        echo "deps.sh: optional ${want[*]} not installed (as root: apt-get install -y ${want[*]})"
        return 0
    fi
    echo "deps.sh: installing optional ${want[*]}"
    if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
        --no-install-recommends "${want[@]}"; } >/dev/null 2>&1; then
        echo "deps.sh: optional ${want[*]} could not be installed; carrying on without"
    fi
    return 0
}

if [[ ${#missing[@]} -eq 0 ]]; then
    install_optional
    exit 0
fi
if [[ $(id -u) -ne 0 ]]; then
    echo "deps.sh: missing packages: ${missing[*]}" >&2
    echo "deps.sh: run as root: apt-get update && apt-get install -y ${missing[*]}" >&2
    exit 1
fi
echo "deps.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
install_optional
