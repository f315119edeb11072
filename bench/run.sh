#!/usr/bin/env bash
# Builds a Release tree in build-release and runs the speed-and-scale scenarios of
# bench/README.md, one process per scenario, pinned to one core. Prints one JSON line per run
# and keeps them in build-release/bench-results.jsonl.
#
#   bench/run.sh                 every scenario at full size
#   bench/run.sh 1 2             only scenarios 1 and 2
#   REQUESTS=100000 bench/run.sh every scenario with that many requests (quick look)
#   EXTRA="--records" bench/run.sh 1   with per-request and per-iteration records kept
#   EXTRA="--output-tokens 340" bench/run.sh 5   scenario 5 at 340 output tokens
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-$root/build-release}"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DSERVESIM_CUDA=OFF \
  -DSERVESIM_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" -j"${JOBS:-2}" --target servesim_bench >/dev/null

pin=()
if command -v taskset >/dev/null; then pin=(taskset -c "${CORE:-0}"); fi
scenarios=("$@")
if [ ${#scenarios[@]} -eq 0 ]; then scenarios=(1 2 3 4 5); fi
extra=()
if [ -n "${REQUESTS:-}" ]; then extra+=(--requests "$REQUESTS"); fi
# shellcheck disable=SC2206
if [ -n "${EXTRA:-}" ]; then extra+=($EXTRA); fi

results="$build/bench-results.jsonl"
for scenario in "${scenarios[@]}"; do
  if [ "$scenario" = 4 ]; then
    for allocator in paged max pow2 oracle; do
      "${pin[@]}" "$build/bench/servesim_bench" --scenario 4 --allocator "$allocator" \
        "${extra[@]}" | tee -a "$results"
    done
  else
    "${pin[@]}" "$build/bench/servesim_bench" --scenario "$scenario" "${extra[@]}" |
      tee -a "$results"
  fi
done
