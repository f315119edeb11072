#!/usr/bin/env bash
# Runs every libFuzzer executable of a SERVESIM_FUZZ=ON build for SECONDS_PER_TARGET seconds,
# one after another (docs/hardening.md, "Fuzzing"):
#
#   tests/fuzz/run_fuzzers.sh BUILD_DIR SECONDS_PER_TARGET
#
# Each target starts from its checked-in seeds (tests/fuzz/corpus/<target>/, only read) and
# writes what it finds to a fresh scratch folder, removed at the end, as are the targets' own
# temporary files (TMPDIR points into it). Prints each target's executions and executions per
# second; exits non-zero, naming the target and keeping its crash file under BUILD_DIR, on any
# finding (a crash, a sanitizer report, a leak, a timeout, an escaped exception). The mutation
# seed is fixed (-seed=1), so two runs on one machine try the same inputs in the same order.
set -euo pipefail

if [[ $# -ne 2 || ! -d $1 || ! $2 =~ ^[0-9]+$ || $2 -lt 1 ]]; then
  echo "usage: $0 BUILD_DIR SECONDS_PER_TARGET" >&2
  exit 2
fi
build=$(cd "$1" && pwd)
seconds=$2
corpus_root=$(cd "$(dirname "$0")/corpus" && pwd)

mapfile -t fuzzers < <(find "$build/tests/fuzz" -maxdepth 1 -type f -name "fuzz_*" -perm -u+x 2>/dev/null | sort)
if [[ ${#fuzzers[@]} -eq 0 ]]; then
  echo "$0: no fuzz_* executables under $build (configure with -DSERVESIM_FUZZ=ON)" >&2
  exit 2
fi

scratch=$(mktemp -d "${TMPDIR:-/tmp}/servesim-fuzz-run.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
findings="$build/fuzz-findings"

failed=()
printf '%-24s %8s %12s %10s  %s\n' target seconds executions exec/s result
for fuzzer in "${fuzzers[@]}"; do
  name=$(basename "$fuzzer")
  target=${name#fuzz_}
  seeds="$corpus_root/$target"
  if [[ ! -d $seeds ]]; then
    echo "$0: $name has no seed corpus ($seeds)" >&2
    failed+=("$name (no seed corpus)")
    continue
  fi
  work="$scratch/$target"
  mkdir -p "$work/corpus" "$work/artifacts" "$work/tmp"
  log="$work/log"
  # -jobs/-fork off: one process, so the log's last line holds the run's totals.
  status=0
  (cd "$work" && TMPDIR="$work/tmp" "$fuzzer" "$work/corpus" "$seeds" \
     -max_total_time="$seconds" -max_len=4096 -timeout=25 -rss_limit_mb=2048 -seed=1 \
     -print_final_stats=1 -artifact_prefix="$work/artifacts/" >"$log" 2>&1) || status=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  runs=${runs:-0}
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
  rate=${rate:-0}
  crash=$(find "$work/artifacts" -type f | head -n 1)
  if [[ $status -ne 0 || -n $crash ]]; then
    mkdir -p "$findings"
    kept=""
    if [[ -n $crash ]]; then
      kept="$findings/$name-$(basename "$crash")"
      cp "$crash" "$kept"
    fi
    cp "$log" "$findings/$name.log"
    printf '%-24s %8s %12s %10s  %s\n' "$name" "$seconds" "$runs" "$rate" "FINDING (exit $status)"
    echo "--- $name: last lines of its log ($findings/$name.log):" >&2
    tail -n 40 "$log" >&2
    failed+=("$name: ${kept:-no crash file (exit $status)}")
  else
    printf '%-24s %8s %12s %10s  %s\n' "$name" "$seconds" "$runs" "$rate" ok
  fi
done

if [[ ${#failed[@]} -gt 0 ]]; then
  echo "fuzzing found problems; reproduce one with: EXECUTABLE CRASH_FILE" >&2
  printf '  %s\n' "${failed[@]}" >&2
  exit 1
fi
echo "no findings in ${#fuzzers[@]} targets"
