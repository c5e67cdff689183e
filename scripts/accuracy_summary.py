#!/usr/bin/env python3
"""Summary of the FP8 kernels' measured accumulation error over GPU test runs: reads the JSON lines that
hopgemm.testing.assert_fp8_gemm_close appends to $HOPGEMM_ACCURACY_LOG (one per checked output: the smallest acc_tol it
would pass with, i.e. max (|d - ref| - output rounding) / error scale) and prints the largest ratio overall and per test
file, the worst checks, and where FP8_ACC_TOL stands against them. The bound should be a few times the largest ratio.

Usage: python scripts/accuracy_summary.py LOG.jsonl... [--out DIR]   (DIR/accuracy.json: the figures)
"""
import argparse
import json
import math
import os
import sys


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("logs", nargs="+")
    parser.add_argument("--out")
    args = parser.parse_args()
    from hopgemm.testing import FP8_ACC_TOL  # the installed package's bound

    rows = []
    for path in args.logs:
        if os.path.exists(path):
            with open(path) as f:
                rows += [json.loads(line) for line in f if line.strip()]
    if not rows:
        print("accuracy: no checks logged")
        return 1
    worst = max(rows, key=lambda r: r["ratio"])
    by_file = {}
    for r in rows:
        name = r["test"].split("::")[0].rsplit("/", 1)[-1] or "(outside pytest)"
        by_file[name] = max(by_file.get(name, 0.0), r["ratio"])
    print(f"accuracy: {len(rows)} checked outputs, max (|d - ref| - rounding) / scale = {worst['ratio']:.3g} "
          f"(2^{math.log2(worst['ratio']):.2f}) at {worst['test']} ({worst['name']}, K = {worst['k']})"
          if worst["ratio"] > 0 else f"accuracy: {len(rows)} checked outputs, no error beyond the output rounding")
    print(f"  FP8_ACC_TOL = {FP8_ACC_TOL:.3g} (2^{math.log2(FP8_ACC_TOL):.0f}): "
          f"{FP8_ACC_TOL / worst['ratio'] if worst['ratio'] > 0 else float('inf'):.1f}x the largest ratio")
    for name, ratio in sorted(by_file.items(), key=lambda x: -x[1]):
        print(f"  {name:40} max {ratio:.3g}")
    for r in sorted(rows, key=lambda r: -r["ratio"])[:8]:
        print(f"  {r['ratio']:.3g}  K = {r['k']:6}  {r['test']}  {r['name']}")
    if args.out:
        with open(os.path.join(args.out, "accuracy.json"), "w") as f:
            json.dump({"checks": len(rows), "max_ratio": worst["ratio"], "worst": worst, "by_file": by_file,
                       "fp8_acc_tol": FP8_ACC_TOL}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
