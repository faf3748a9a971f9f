#!/usr/bin/env bash
# demo.sh: the main job (the README's first command). Builds weft in Release (-O2, the "bench"
# preset, no tests) and runs the scaling demo, weft_demo: a world of 1,000,000 moving entities
# (plus particles and a hierarchy, ~1.4 million in all) and 17 systems, run for the same frames
# at 1..N workers. It prints frame time, speedup, efficiency and the world hash per worker
# count (identical for every count, or the demo fails), the measured serial and
# synchronisation fractions and what the schedule simulator (tools/sim) gives for 1-64 workers
# (marked as simulated, with its error against the measured 1- and 2-worker frames), and writes
# report.json, speedup.svg, timeline.svg, trace.json, schedule.dot (+ schedule.svg with
# Graphviz's `dot`; without it the demo says so in one line and carries on) into the output
# folder it names at the end (default: build/demo).
#
# Usage: tools/demo.sh [weft_demo options]
#   tools/demo.sh                      # workers 1..hardware threads, 30 timed frames
#   tools/demo.sh --quick              # 200k entities, 10 frames: a smoke run
#   tools/demo.sh --max-workers 8      # more workers than cores: oversubscription
#   tools/demo.sh --out /tmp/run1      # another output folder
# WEFT_DEMO_BUILD_DIR=dir tools/demo.sh builds in `dir` (plain Release configure) instead of
# the bench preset's build/bench.
# Missing packages are installed first when run as root (tools/deps.sh demo: the build's,
# plus graphviz when it can be installed).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
if [[ -x tools/deps.sh ]]; then
    tools/deps.sh demo
fi

mkdir -p build/logs
log=build/logs/demo-build.log
echo "demo: building weft_demo (Release, -O2; log: $log)"
if [[ -z ${WEFT_DEMO_BUILD_DIR:-} ]] && cmake --list-presets 2>/dev/null | grep -q '"bench"'; then
    build_dir=build/bench
    configure=(cmake --preset bench)
else
    build_dir=${WEFT_DEMO_BUILD_DIR:-build/demo-release}
    configure=(cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS_RELEASE="-O2 -DNDEBUG"
               -DWEFT_BUILD_TESTS=OFF)
fi
if ! { "${configure[@]}" && cmake --build "$build_dir" -j2 --target weft_demo; } >"$log" 2>&1; then
    tail -n 60 "$log"
    echo "demo: build failed (full log: $log)" >&2
    exit 1
fi

args=("$@")
if [[ " ${args[*]-} " != *" --out "* ]]; then
    args+=(--out build/demo)
fi
exec "$build_dir/tools/weft_demo" "${args[@]}"
