#!/usr/bin/env bash
# Runs a set of configurations with bulk decoding on and off and reports every output file
# that differs (summary.json, requests.csv, iterations.csv must be byte-identical):
#
#   bench/bulk_vs_plain.sh BUILD_DIR [SEED...]     # seeds default to 1 2 3 4
#
# A differential sweep beside the contract tests (tests/cluster/bulk_decode_test.cpp): engines,
# workloads with content, tight memory, disaggregation with both hand-offs and local prefills,
# the prefix-aware router, closed loops, DP and EP, and decode runs through preemption at
# overload. Exits 1 when any file differs or a run fails.
set -uo pipefail
cli="$1/sim/servesim"
shift
seeds=("$@")
[ ${#seeds[@]} -eq 0 ] && seeds=(1 2 3 4)
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
configs=(
  "--workload sharegpt --num-requests 300 --rate 30 --kv-capacity-tokens 6000"
  "--workload sharegpt --num-requests 400 --rate 200 --kv-capacity-tokens 12000 --replicas 2 --max-num-seqs 16"
  "--workload agentic-coding --num-requests 150 --rate 6 --kv-capacity-tokens 30000 --set memory.host_cache_gib=1"
  "--workload multi-turn-chat --num-requests 150 --rate 20 --kv-capacity-tokens 15000 --replicas 2"
  "--workload sharegpt --num-requests 300 --rate 20 --kv-capacity-tokens 12000 --set workload.lengths='{\"distribution\": \"shared_prefix\", \"groups\": 4, \"users_per_group\": 5, \"system_prompt_tokens\": 100, \"question_tokens\": 300, \"output_tokens\": 400, \"questions\": \"per_user\"}'"
  "--workload sharegpt --num-requests 300 --rate 20 --kv-capacity-tokens 24000 --replicas 2 --router prefix_aware --set workload.lengths='{\"distribution\": \"shared_prefix\", \"groups\": 4, \"users_per_group\": 5, \"system_prompt_tokens\": 100, \"question_tokens\": 300, \"output_tokens\": 400, \"questions\": \"per_user\"}'"
  "--workload agentic-coding --num-requests 200 --rate 8 --replicas 3 --router prefix_aware --kv-capacity-tokens 40000"
  "--disaggregation 1p2d --workload sharegpt --num-requests 300 --rate 20 --kv-capacity-tokens 15000"
  "--disaggregation 2p1d --workload sharegpt --num-requests 300 --rate 20 --kv-capacity-tokens 15000 --set disaggregation.kv_transfer.handoff=\"reserve_before_prefill\""
  "--disaggregation 1p1d --workload agentic-coding --num-requests 150 --rate 5 --kv-capacity-tokens 30000 --set disaggregation.local_prefill_max_tokens=500"
  "--disaggregation 1p2d --workload agentic-coding --num-requests 150 --rate 5 --kv-capacity-tokens 30000"
  "--engine sglang --workload sharegpt --num-requests 300 --rate 40 --kv-capacity-tokens 8000"
  "--engine trtllm --workload sharegpt --num-requests 300 --rate 40 --kv-capacity-tokens 8000"
  "--workload sharegpt --num-requests 300 --rate 40 --max-len 600 --kv-capacity-tokens 9000"
  "--workload sharegpt --num-requests 200 --arrival closed_loop --set workload.arrival.users=30 --set workload.arrival.think_time_s=0.2 --kv-capacity-tokens 8000"
  "--model qwen3-30b-a3b --tp 1 --dp 2 --enable-expert-parallel --workload sharegpt --num-requests 200 --rate 30 --kv-capacity-tokens 10000"
  "--prompt-tokens 160 --output-tokens 1500 --rate 200 --num-requests 300 --kv-capacity-tokens 40000"
  "--workload sharegpt --num-requests 400 --rate 100 --kv-capacity-tokens 20000 --max-num-seqs 64 --set scheduler.long_prefill_token_threshold=128 --replicas 2"
)
runs=0
bad=0
for seed in "${seeds[@]}"; do
  for config in "${configs[@]}"; do
    runs=$((runs + 1))
    rm -rf "$work/bulk" "$work/plain"
    if ! eval "\"$cli\" run $config --seed $seed --out \"$work/bulk\"" >/dev/null 2>"$work/err" ||
      ! eval "\"$cli\" run $config --seed $seed --out \"$work/plain\" --no-bulk-decode" \
        >/dev/null 2>>"$work/err"; then
      echo "FAILED seed $seed: $config: $(tail -1 "$work/err")"
      bad=$((bad + 1))
      continue
    fi
    for file in summary.json requests.csv iterations.csv; do
      if ! cmp -s "$work/bulk/$file" "$work/plain/$file"; then
        echo "DIFFERS seed $seed, $file: $config"
        bad=$((bad + 1))
      fi
    done
  done
done
echo "$runs runs, $bad differences or failures"
[ "$bad" -eq 0 ]
