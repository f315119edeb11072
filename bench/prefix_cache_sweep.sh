#!/usr/bin/env bash
# Prefix caching against the cache's size, on the Mooncake conversation trace (rows 0-1999 at a
# quarter of their rate, time_scale 4): llama-3.1-8b on one H100, max-len 131072, KV capacity
# from 250k to 40M token slots, prefix caching on and off. Writes prefix_cache_sweep.csv (hit
# rate, mean and p99 TTFT, preemptions per size and setting) and prefix_cache_sweep.png (hit
# rate, and mean TTFT with and without caching, against the capacity) into OUT_DIR.
#
#   bench/prefix_cache_sweep.sh [OUT_DIR] [TRACE]
#       (defaults: prefix-cache-sweep, ../shared/data/traces/mooncake/conversation_trace.jsonl)
#   SERVESIM=path/to/servesim bench/prefix_cache_sweep.sh
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
servesim="${SERVESIM:-$root/build/sim/servesim}"
out="${1:-prefix-cache-sweep}"
trace="$(realpath "${2:-$root/../shared/data/traces/mooncake/conversation_trace.jsonl}")"
mkdir -p "$out"
cat >"$out/workload.json" <<JSON
{"arrival": {"process": "trace"}, "lengths": {"distribution": "trace"},
 "trace": {"path": "$trace", "end_row": 2000, "time_scale": 4}}
JSON
"$servesim" sweep --model llama-3.1-8b --hw h100-sxm --workload "$out/workload.json" \
  --max-len 131072 --no-plots --out "$out/sweep" \
  --grid kv-capacity-tokens=250000,500000,1000000,2000000,4000000,8000000,40000000 \
  --grid engine.enable_prefix_caching=true,false >/dev/null

# One row per capacity: hit rate, then mean and p99 TTFT (s) and preemptions, on and off.
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
         { key = $c["kv-capacity-tokens"]; on = $c["engine.enable_prefix_caching"] == "true"
           row = sprintf("%.4f,%.3f,%.3f,%d", $c["prefix_cache_hit_rate"], $c["ttft_s.mean"],
                         $c["ttft_s.p99"], $c["preemptions"])
           if (on) with[key] = row; else without[key] = row }
         END { for (key in with) print key "," with[key] "," without[key] }' \
  "$out/sweep/sweep.csv" | sort -t, -k1,1n >"$out/rows.csv"
{
  echo "kv_capacity_tokens,hit_rate,ttft_mean_s,ttft_p99_s,preemptions,off_hit_rate,\
off_ttft_mean_s,off_ttft_p99_s,off_preemptions"
  cat "$out/rows.csv"
} >"$out/prefix_cache_sweep.csv"
rm "$out/rows.csv"

gnuplot <<GNUPLOT
set terminal pngcairo size 1100,450 noenhanced
set output "$out/prefix_cache_sweep.png"
set datafile separator ","
set key bottom right
set logscale x 10
set xlabel "KV cache (token slots)"
set multiplot layout 1,2 title "Mooncake conversation trace (2,000 requests), llama-3.1-8b on H100 SXM"
set ylabel "prefix cache hit rate"
set yrange [0:*]
plot "$out/prefix_cache_sweep.csv" using 1:2 with linespoints lw 2 title "caching on"
set ylabel "mean TTFT (s)"
set key top right
set logscale y
set yrange [*:*]
plot "$out/prefix_cache_sweep.csv" using 1:3 with linespoints lw 2 title "caching on", \
     "" using 1:7 with linespoints lw 2 title "caching off"
unset multiplot
GNUPLOT
cat "$out/prefix_cache_sweep.csv"
