#!/usr/bin/env python3
"""The per-call figures of README.md's "Before the graph run" section.

Prices every cuBLAS bf16 record of gemm_sweep_*.json with a hardware profile the way
`servesim validate` does for 16-bit GEMMs (m = 1: a GEMV at the fp32 peak, no ramp; m >= 2:
the class's fitted 128 x 128 tiles, ramp and quantization weight; sim/calibration/
prediction.cpp, sim/hardware/gemm_kernels.cpp), then fits one constant c, the harness's cost
per call, to the Llama-3-8B TP 1 sweep (least squares of relative errors) and checks profile
+ c on the other two sweeps. Standard library only. Run from the repository root:
    python3 validation/results/h200-2026-12-04/per_call_analysis.py [PROFILE.json]
With the shipped profile its per-class MAPE and bias equal `servesim validate`'s.
"""
import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OPS = ["qkv", "o", "mlp_up", "mlp_down", "lm_head"]
SWEEPS = {
    "TP1": "gemm_sweep_llama-3-8b_tp1.json",
    "TP2": "gemm_sweep_llama-3-8b_tp2.json",
    "70B TP8": "gemm_sweep_llama-2-70b_tp8.json",
}


def predict(r, prof):
    kernels = prof["kernels"]
    op = r.get("operator")
    cls = kernels.get("gemm_" + op, kernels["gemm"]) if op != "lm_head" else kernels["gemm"]
    m, n, k = r["m"], r["n"], r["k"]
    flops = 2 * m * n * k
    memory = (n * k * 2 + m * (n + k) * 2) / prof["memory_bandwidth_bytes_per_s"]
    memory *= (1 + cls["memory_half_size"] / max(m, 1)) / cls["memory_efficiency"]
    if m <= 1:
        compute = flops / prof["peak_flops_per_s"]["fp32"] / cls["compute_efficiency"]
    else:
        peak = prof["peak_flops_per_s"]["bf16"]
        tiles = math.ceil(m / cls["tile_m"]) * math.ceil(n / cls["tile_n"])
        sms = prof["sm_count"]
        slots = math.ceil(tiles / sms) * sms * cls["tile_m"] * cls["tile_n"]
        idle = 2 * k * max(slots - m * n, 0)
        compute = (flops / peak * (1 + cls["compute_half_size"] / m) +
                   cls["quantization_weight"] * idle / peak) / cls["compute_efficiency"]
    return max(compute, memory) + cls["fixed_s"]


def load(name):
    with open(os.path.join(HERE, name)) as f:
        return [r for r in json.load(f)["measurements"] if r["operator_kind"] == "gemm"]


def mape_bias(pairs):
    errors = [p / y - 1 for p, y in pairs]
    return (100 * sum(abs(e) for e in errors) / len(errors), 100 * sum(errors) / len(errors))


def main():
    with open(sys.argv[1] if len(sys.argv) > 1 else "hw_profiles/h200.json") as f:
        prof = json.load(f)
    sweeps = {label: load(name) for label, name in SWEEPS.items()}
    fit = sweeps["TP1"]
    c = (sum((r["median_s"] - predict(r, prof)) / r["median_s"] ** 2 for r in fit) /
         sum(1 / r["median_s"] ** 2 for r in fit))
    print("c fitted to the TP1 sweep (70 records): %.2f us" % (c * 1e6))
    print("\nMAPE / bias per class, the profile alone and profile + c:")
    for label, recs in sweeps.items():
        for add, what in ((0.0, "profile"), (c, "profile + c")):
            cells = []
            for op in OPS:
                pairs = [(predict(r, prof) + add, r["median_s"]) for r in recs if r["operator"] == op]
                cells.append("%s %.1f%% / %+.1f%%" % ((op,) + mape_bias(pairs)))
            print("  %-8s %-12s %s" % (label, what, "  ".join(cells)))
    print("\nBias by token range, profile / profile + c:")
    held = sweeps["TP2"] + sweeps["70B TP8"]
    for label, recs in (("TP1 (c fitted)", fit), ("TP2 + 70B TP8", held)):
        print("  " + label)
        for lo, hi in ((1, 1), (2, 64), (128, 1024), (2048, 8192)):
            cells = []
            for op in OPS:
                rs = [r for r in recs if r["operator"] == op and lo <= r["m"] <= hi]
                before = mape_bias([(predict(r, prof), r["median_s"]) for r in rs])[1]
                after = mape_bias([(predict(r, prof) + c, r["median_s"]) for r in rs])[1]
                cells.append("%s %+.0f / %+.0f%%" % (op, before, after))
            print("    m %4d-%4d  %s" % (lo, hi, "  ".join(cells)))
    print("\nm = 1, every shape: time against weight bytes W")
    points = sorted((r["n"] * r["k"] * 2 / 1e6, r["median_s"] * 1e6)
                    for recs in sweeps.values() for r in recs if r["m"] == 1)
    count = len(points)
    sx = sum(x for x, _ in points)
    sy = sum(y for _, y in points)
    sxx = sum(x * x for x, _ in points)
    sxy = sum(x * y for x, y in points)
    slope = (count * sxy - sx * sy) / (count * sxx - sx * sx)
    intercept = (sy - slope * sx) / count
    worst = max(abs(intercept + slope * x - y) for x, y in points)
    print("  T = %.1f us + W / %.2f TB/s over %d shapes (largest miss %.1f us)" %
          (intercept, 1 / slope, count, worst))


if __name__ == "__main__":
    main()
