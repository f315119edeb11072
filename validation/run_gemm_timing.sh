#!/usr/bin/env bash
# The prepared device run for the H200 GEMM calibration (docs/validation.md, "The harness's
# kernels on an H200"): the cuBLAS GEMM sweeps of validation/results/h200-2026-12-04/
# (Llama-3-8B at TP 1 and 2, Llama-2-70B at TP 8, 1-8,192 tokens) timed back to back in a
# CUDA graph and on a stream beside the original per-call timing, tile-edge token counts for a
# held-out check, and ncu kernel durations and names under the graph; then the same three
# sweeps as cuBLASLt FP8 GEMMs (gemm --dtype fp8) in graph and per-call timing, and their
# kernels' names under ncu. The bf16 part took 221 s on an H200; the FP8 steps add about two
# minutes. Needs a built harness only (no CMake on the GPU machine):
#   HARNESS=path/to/servesim-harness OUT=/tmp/results validation/run_gemm_timing.sh
# Run from the repository root (models/ are read from it). Each step has a time limit and
# runs even if an earlier one failed; $OUT/steps.txt lists their exit codes; at the end the
# results are packed into $OUT/gemm_timing.tar.gz (folder r/).
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
harness="${HARNESS:-$root/build-gpu/validation/servesim-harness}"
out="${OUT:-$root/out/gemm-timing}"
r="$out/r"
mkdir -p "$r"
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
export SERVESIM_DATA_DIR="${SERVESIM_DATA_DIR:-$root}"
ncu="${NCU:-/usr/local/cuda/bin/ncu}"
tokens=1,2,4,8,16,32,64,128,256,512,1024,2048,4096,8192
: >"$r/steps.txt"

step() {  # step NAME SECONDS COMMAND...: runs it under a time limit, logs, records the exit code
  local name="$1" limit="$2"
  shift 2
  local start=$SECONDS
  timeout "$limit" "$@" >"$r/$name.log" 2>&1
  echo "$name rc=$? seconds=$((SECONDS - start))" | tee -a "$r/steps.txt"
}

# The GEMMs' operand type: bf16 (the default) or fp8 (cuBLASLt, e4m3 operands, bf16 output).
# Steps and files of an fp8 sweep are named with an fp8_ prefix.
dtype=bf16

sweep() {  # sweep TIMING MODEL TP REPEATS [OPTION...]
  local timing="$1" model="$2" tp="$3" repeats="$4"
  shift 4
  local name="${timing}_${model}_tp${tp}"
  [ "$dtype" = bf16 ] || name="${dtype}_${name}"
  step "$name" 150 "$harness" gemm --model "$model" --tp "$tp" --dtype "$dtype" \
    --tokens "$tokens" --repeats "$repeats" --timing "$timing" "$@" \
    --out "$r/gemm_${name}.json"
}

kernels() {  # kernels MODEL TP: ncu durations and names of every kernel under graph timing
  local name="ncu_graph_$1_tp$2"
  [ "$dtype" = bf16 ] || name="ncu_${dtype}_graph_$1_tp$2"
  step "$name" 150 "$ncu" --clock-control none --metrics gpu__time_duration.sum \
    --csv --log-file "$r/$name.csv" "$harness" gemm --model "$1" --tp "$2" --dtype "$dtype" \
    --tokens "$tokens" --repeats 1 --timing graph --calls 2 --out "$r/ncu_run.json"
}

nvidia-smi >"$r/nvidia-smi.txt" 2>&1
nvidia-smi -q -d CLOCK >>"$r/nvidia-smi.txt" 2>&1

# 1. The three sweeps in graph timing (what a CUDA-graph engine sees): the data to fit on
#    (TP 1) and to check on (TP 2, 70B TP 8).
sweep graph llama-3-8b 1 10 --calls 20
sweep graph llama-3-8b 2 10 --calls 20
sweep graph llama-2-70b 8 10 --calls 20
# 2. Kernel durations and names at TP 1 (split-K, reduce kernels, tiles by token count);
#    ncu serialises the kernels, clocks are left free.
kernels llama-3-8b 1
# 3. Per-call again in the same session (the old files' timing), and the stream timing.
sweep per_call llama-3-8b 1 20
sweep stream llama-3-8b 1 10 --calls 20
sweep stream llama-3-8b 2 10 --calls 20
sweep stream llama-2-70b 8 10 --calls 20
# 4. Token counts between the powers of two (tile and split-K edges): held out, graph timing.
step graph_llama-3-8b_tp1_between 120 "$harness" gemm --model llama-3-8b --tp 1 \
  --tokens 3,6,12,24,48,96,160,192,320,384,640,768,1536,3072 --repeats 10 --timing graph \
  --calls 20 --out "$r/gemm_graph_llama-3-8b_tp1_between.json"
# 5. Kernel choices of the other two sweeps.
kernels llama-3-8b 2
kernels llama-2-70b 8
# 6. The same three sweeps as FP8 GEMMs through cuBLASLt (e4m3 activations and weights,
#    per-tensor scales, bf16 output; no LM head), graph-timed and per call; the logs hold the
#    algorithm cuBLASLt chose for each shape, ncu its kernels' names at TP 1.
dtype=fp8
sweep graph llama-3-8b 1 10 --calls 20
sweep graph llama-3-8b 2 10 --calls 20
sweep graph llama-2-70b 8 10 --calls 20
sweep per_call llama-3-8b 1 20
sweep per_call llama-3-8b 2 20
sweep per_call llama-2-70b 8 20
kernels llama-3-8b 1
rm -f "$r/ncu_run.json"
tar -C "$out" -czf "$out/gemm_timing.tar.gz" r && rm -rf "$r"
