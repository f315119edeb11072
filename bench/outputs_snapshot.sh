#!/usr/bin/env bash
# Writes the outputs of a fixed set of runs into OUT_DIR, to compare two builds byte for
# byte after a change that must not move any figure (a refactor, a fast path):
#
#   bench/outputs_snapshot.sh BUILD_DIR OUT_DIR
#   diff -r OUT_A OUT_B
#
# The set: bench scenarios 1, 2 and 4 at reduced size with their records written, runs under
# every engine profile and scheduler/allocator pair (the contract tests' policies), prefix
# caching, speculation, swap, DP and EP, and `validate` on every shipped measured file found
# in ../shared/data/measured.
set -euo pipefail
build="$1"
out="$2"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cli="$build/sim/servesim"
mkdir -p "$out"
cd "$root"

"$build/bench/servesim_bench" --scenario 1 --requests 20000 --rate 300 --records \
  --out "$out/bench1" | grep -o '"events":[0-9]*,"iterations":[0-9]*' >"$out/bench1.txt"
"$build/bench/servesim_bench" --scenario 2 --requests 500 --rate 20 --records \
  --out "$out/bench2" | grep -o '"events":[0-9]*,"iterations":[0-9]*' >"$out/bench2.txt"
for allocator in paged max pow2 oracle; do
  "$build/bench/servesim_bench" --scenario 4 --allocator "$allocator" --requests 2000 \
    --records --out "$out/bench4-$allocator" |
    grep -o '"events":[0-9]*,"iterations":[0-9]*' >"$out/bench4-$allocator.txt"
done

run() {
  local name="$1"
  shift
  "$cli" run --out "$out/run-$name" "$@" >"$out/run-$name.txt" 2>&1 ||
    echo "exit $?" >>"$out/run-$name.txt"
}
set -- --num-requests 400 --rate 12
common=("$@")
for engine in engines/*.json; do
  run "engine-$(basename "$engine" .json)" "${common[@]}" --engine "$engine"
done
for policy in vllm:paged vllm_v1:paged orca:contiguous orca:paged static:paged \
  static:contiguous sarathi:paged sarathi:contiguous; do
  run "policy-${policy/:/-}" "${common[@]}" --scheduler "${policy%%:*}" --allocator "${policy##*:}"
done
for reservation in max pow2 oracle fixed; do
  run "reservation-$reservation" "${common[@]}" --scheduler orca --reservation "$reservation"
done
run prefix-shared --workload agentic-coding --num-requests 200 --rate 4
run swap --engine vllm-v0 --preemption swap --kv-capacity-tokens 20000 --num-requests 400 --rate 30
run spec --speculative-config '{"method": "ngram", "num_speculative_tokens": 3}' --acceptance-rate 0.6 "${common[@]}"
run moe-ep --model qwen3-30b-a3b --tp 2 --enable-expert-parallel "${common[@]}"
run moe-dp --model qwen3-30b-a3b --tp 1 --dp 2 --enable-expert-parallel "${common[@]}"
run gpt-oss --model gpt-oss-20b --workload sharegpt "${common[@]}"
run llama4 --model llama-4-scout --tp 4 --max-len 32768 "${common[@]}"
run multi-turn --workload multi-turn-chat --num-requests 200
run tp4-pp2 --model llama-2-70b --tp 4 --pp 2 --replicas 2 --router least_kv "${common[@]}"
"$cli" roofline --model qwen3-30b-a3b --hw a100-80gb --decode-batch 16 --json >"$out/roofline.json"
"$cli" kv --model llama-3.1-70b --hw h100-sxm --tp 2 --json >"$out/kv.json" 2>&1 || true

measured="$root/../shared/data/measured"
for file in vllm-0.15.1-h100-sxm trtllm-0.9.0-static-fp8 vllm-2023-opt13b-a100-40gb; do
  if [ -f "$measured/$file.csv" ]; then
    "$cli" validate --measured "$measured/$file.csv" --json >"$out/validate-$file.json" 2>&1 ||
      echo "exit $?" >>"$out/validate-$file.json"
  fi
done
# The folder's own path differs between snapshots; every other byte must not.
find "$out" -name '*.txt' -print0 | xargs -0 sed -i "s#$out#OUT#g"
