#!/usr/bin/env python3
"""Markdown table and target summary of a `hopgemm bench` JSON (for docs/PERFORMANCE.md).

usage: bench/table.py bench/results/<file>.json
"""
import json
import math
import sys


def fmt(value, spec="{:.1f}"):
    return "n/a" if value is None else spec.format(value)


def main(path):
    report = json.load(open(path))
    header = report["header"]
    print(f"{header['gpu']}, {header['date_utc']}, commit {header['commit']}, `{header['command_line']}`, "
          f"copy {header.get('copy_bandwidth_gbps') or 0:.0f} GB/s\n")
    # Suites with no blockwise baseline at all (1D1D wgrad: cuBLASLt has no 1x128 x 1x128 mode) drop its two columns.
    blockwise = any(row["baselines_us"].get("cublaslt_fp8_blockwise") for row in report["rows"])
    columns = ["role", "M", "N", "K", "ours us", "TFLOPS", "GB/s"]
    columns += ["cuBLASLt blockwise us", "speed-up"] if blockwise else []
    columns += ["cuBLASLt per-tensor us", "per-tensor / ours", "cuBLAS BF16 us", "tile, cluster"]
    print("| " + " | ".join(columns) + " |")
    print("|" + "---|" * len(columns))
    speedups, m4096 = [], []
    for row in report["rows"]:
        base, ratio = row["baselines_us"], row["ratios"]
        config = row["config"]
        tile = config.split("block_m=")[1].split(",")[0] + "x" + config.split("block_n=")[1].split(",")[0]
        cluster = config.split("cluster=")[1].split(",")[0]
        role = row["note"].split()[0]
        cells = [role, row["m"], row["n"], row["k"], fmt(row["ours_us"]), fmt(row["tflops"], "{:.0f}"),
                 fmt(row["gbps"], "{:.0f}")]
        if blockwise:
            cells += [fmt(base.get("cublaslt_fp8_blockwise")), fmt(ratio.get("cublaslt_fp8_blockwise"), "{:.2f}x")]
        cells += [fmt(base.get("cublaslt_fp8_per_tensor")), fmt(ratio.get("cublaslt_fp8_per_tensor"), "{:.2f}x"),
                  fmt(base.get("cublas_bf16")), f"{tile} c{cluster}"]
        print("| " + " | ".join(str(c) for c in cells) + " |")
        if ratio.get("cublaslt_fp8_blockwise"):
            speedups.append(ratio["cublaslt_fp8_blockwise"])
        if row["m"] == 4096 and role == "fwd" and ratio.get("cublaslt_fp8_per_tensor"):
            m4096.append(ratio["cublaslt_fp8_per_tensor"])
    geo = lambda v: math.exp(sum(map(math.log, v)) / len(v)) if v else float("nan")
    if speedups:  # suites without a blockwise baseline (1D1D wgrad) have no summary line
        print(f"\nGeometric-mean speed-up over cuBLASLt blockwise: {geo(speedups):.3f}x over {len(speedups)} shapes "
              f"(min {min(speedups):.2f}x); M=4096 forward, per-tensor time / ours (geomean): {geo(m4096):.3f}x.")


if __name__ == "__main__":
    main(sys.argv[1])
