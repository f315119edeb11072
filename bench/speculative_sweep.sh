#!/usr/bin/env bash
# The batch-size sweep of docs/speculative.md: llama-3-8b on one H100, 1,024 requests of 512
# prompt and 256 output tokens all at once, max-num-seqs = the batch size, without
# speculation, with n-gram lookup (k = 3, acceptance 0.7) and with an EAGLE head (k = 3,
# acceptance 0.7 and 0.5). Writes
# speculative_sweep.csv (output tokens/s and mean TPOT per batch size and mode) and
# speculative_sweep.png (both against the batch size) into OUT_DIR.
#
#   bench/speculative_sweep.sh [OUT_DIR]     (default: speculative-sweep)
#   SERVESIM=path/to/servesim bench/speculative_sweep.sh
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
servesim="${SERVESIM:-$root/build/sim/servesim}"
out="${1:-speculative-sweep}"
mkdir -p "$out"
grid=(--grid max-num-seqs=1,2,4,8,16,32,64,128,256,384,512 --num-requests 1024 --rate inf
  --prompt-tokens 512 --output-tokens 256 --no-plots)
"$servesim" sweep "${grid[@]}" --out "$out/plain" >/dev/null
# mode name, method, acceptance rate
modes=("ngram_a0.7 ngram 0.7" "eagle_a0.7 eagle 0.7" "eagle_a0.5 eagle 0.5")
for mode in "${modes[@]}"; do
  read -r name method rate <<<"$mode"
  "$servesim" sweep "${grid[@]}" --out "$out/$name" --acceptance-rate "$rate" \
    --speculative-config "{\"method\": \"$method\", \"num_speculative_tokens\": 3}" >/dev/null
done

# Columns by name from a sweep.csv: batch size, output tokens/s, mean TPOT in ms.
columns() {
  awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
           { printf "%d %.0f %.2f\n", $c["max-num-seqs"], $c["throughput_output_tokens_per_s"],
             1e3 * $c["tpot_s.mean"] }' "$1"
}
{
  echo "batch,plain_tokens_per_s,ngram_a0.7_tokens_per_s,eagle_a0.7_tokens_per_s,\
eagle_a0.5_tokens_per_s,plain_tpot_ms,ngram_a0.7_tpot_ms,eagle_a0.7_tpot_ms,eagle_a0.5_tpot_ms"
  paste -d' ' <(columns "$out/plain/sweep.csv") <(columns "$out/ngram_a0.7/sweep.csv") \
    <(columns "$out/eagle_a0.7/sweep.csv") <(columns "$out/eagle_a0.5/sweep.csv") |
    awk '{ print $1 "," $2 "," $5 "," $8 "," $11 "," $3 "," $6 "," $9 "," $12 }'
} >"$out/speculative_sweep.csv"

gnuplot <<GNUPLOT
set terminal pngcairo size 1100,450 noenhanced
set output "$out/speculative_sweep.png"
set datafile separator ","
set key autotitle columnhead top left
set logscale x 2
set xlabel "batch size (max-num-seqs)"
set multiplot layout 1,2 title "llama-3-8b on H100 SXM: speculation (k = 3) against none"
set ylabel "output tokens/s"
plot for [i=2:5] "$out/speculative_sweep.csv" using 1:i with linespoints lw 2
set ylabel "mean TPOT (ms)"
set logscale y
plot for [i=6:9] "$out/speculative_sweep.csv" using 1:i with linespoints lw 2
unset multiplot
GNUPLOT
cat "$out/speculative_sweep.csv"
