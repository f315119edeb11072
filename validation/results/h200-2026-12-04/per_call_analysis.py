#!/usr/bin/env python3
"""The per-call figures of README.md's "Before the graph run" section.

Reads the per-record predictions `servesim validate --csv` writes for the three per-call
cuBLAS sweeps (the simulator prices every record; nothing is priced here), fits one constant c,
the harness's cost per call, to the Llama-3-8B TP 1 sweep (least squares of relative errors)
and checks profile + c on the other two sweeps. Standard library only. From the repository
root:
    D=validation/results/h200-2026-12-04
    build/sim/servesim validate --hw h200 --measurements $D/gemm_sweep_llama-3-8b_tp1.json \
        $D/gemm_sweep_llama-3-8b_tp2.json $D/gemm_sweep_llama-2-70b_tp8.json --csv per_call.csv
    python3 $D/per_call_analysis.py per_call.csv
"""
import csv
import os
import sys

OPS = ["qkv", "o", "mlp_up", "mlp_down", "lm_head"]
SWEEPS = {
    "TP1": "gemm_sweep_llama-3-8b_tp1.json",
    "TP2": "gemm_sweep_llama-3-8b_tp2.json",
    "70B TP8": "gemm_sweep_llama-2-70b_tp8.json",
}


def load(path):
    """The GEMM records of each sweep: operator, m, n, k, measured and predicted seconds."""
    sweeps = {label: [] for label in SWEEPS}
    by_file = {name: label for label, name in SWEEPS.items()}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            label = by_file.get(os.path.basename(row["source"]))
            if label is None or row["kind"] != "gemm":
                continue
            sweeps[label].append({
                "operator": row["operator"],
                "m": int(row["m"]), "n": int(row["n"]), "k": int(row["k"]),
                "median_s": float(row["measured_s"]),
                "predicted_s": float(row["predicted_s"]),
            })
    for label, records in sweeps.items():
        if not records:
            sys.exit("%s: no records of %s" % (path, SWEEPS[label]))
    return sweeps


def predict(r):
    return r["predicted_s"]


def mape_bias(pairs):
    errors = [p / y - 1 for p, y in pairs]
    return (100 * sum(abs(e) for e in errors) / len(errors), 100 * sum(errors) / len(errors))


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: per_call_analysis.py PREDICTIONS.csv (servesim validate --csv)")
    sweeps = load(sys.argv[1])
    fit = sweeps["TP1"]
    c = (sum((r["median_s"] - predict(r)) / r["median_s"] ** 2 for r in fit) /
         sum(1 / r["median_s"] ** 2 for r in fit))
    print("c fitted to the TP1 sweep (%d records): %.2f us" % (len(fit), c * 1e6))
    print("\nMAPE / bias per class, the profile alone and profile + c:")
    for label, recs in sweeps.items():
        for add, what in ((0.0, "profile"), (c, "profile + c")):
            cells = []
            for op in OPS:
                pairs = [(predict(r) + add, r["median_s"]) for r in recs if r["operator"] == op]
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
                before = mape_bias([(predict(r), r["median_s"]) for r in rs])[1]
                after = mape_bias([(predict(r) + c, r["median_s"]) for r in rs])[1]
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
