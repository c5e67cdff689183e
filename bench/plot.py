#!/usr/bin/env python3
"""Plot one `hopgemm bench` result file: TFLOPS per shape, ours next to each baseline (grouped bars).

Usage: python3 bench/plot.py bench/results/<gpu>-<date>-<suite>.json [--out FILE.png] [--log]

Reads the JSON written by src/bench/bench_result.cpp (schema "hopgemm-bench/1"); a missing time (null: a baseline
that rejects the shape, or an op not run) leaves an empty slot marked "n/a". Baseline TFLOPS are computed from the
same FLOP count as ours (2*M*N*K over valid rows, recovered from our tflops and time where ours ran, else 2*M*N*K*groups).
Saves a PNG next to the JSON unless --out is given. Headless: uses the Agg backend.
"""
import argparse
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (backend must be chosen first)


def row_flops(row):
    """FLOPs of one row: from our TFLOPS x time when available (the writer's own count), else 2*M*N*K*groups."""
    if row.get("tflops") is not None and row.get("ours_us"):
        return row["tflops"] * 1e6 * row["ours_us"]
    return 2.0 * row["m"] * row["n"] * row["k"] * max(1, row.get("groups", 1))


def row_label(row):
    label = f'{row["m"]}x{row["n"]}x{row["k"]}'
    if row.get("groups", 1) > 1:
        label = f'g{row["groups"]} ' + label
    note = (row.get("note") or "").split(" ")[0]
    return f"{note} {label}".strip() if note in ("fwd", "dgrad", "wgrad") else label


def series(rows):
    """[(name, [tflops or None per row])]: ours first, then every baseline in order of first appearance."""
    names = []
    for row in rows:
        for name in row.get("baselines_us", {}):
            if name not in names:
                names.append(name)
    out = [("hopgemm", [r.get("tflops") for r in rows])]
    for name in names:
        values = []
        for row in rows:
            us = row.get("baselines_us", {}).get(name)
            values.append(row_flops(row) / (us * 1e6) if us else None)
        out.append((name, values))
    return out


def plot(report, out_path, log_scale=False):
    rows = report.get("rows", [])
    if not rows:
        raise SystemExit("no rows to plot")
    header = report.get("header", {})
    data = series(rows)
    n_series = len(data)
    width = 0.8 / n_series
    fig_width = max(8.0, 0.55 * len(rows) * max(1, n_series / 2))
    fig, ax = plt.subplots(figsize=(fig_width, 5.5))
    for s, (name, values) in enumerate(data):
        xs = [i + (s - (n_series - 1) / 2) * width for i in range(len(rows))]
        heights = [v if v is not None else 0.0 for v in values]
        bars = ax.bar(xs, heights, width, label=name)
        for x, v in zip(xs, values):
            if v is None:
                ax.text(x, 0, "n/a", rotation=90, ha="center", va="bottom", fontsize=6, color=bars.patches[0].get_facecolor())
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels([row_label(r) for r in rows], rotation=60, ha="right", fontsize=7)
    ax.set_ylabel("TFLOPS")
    if log_scale:
        ax.set_yscale("log")
    title = f'{header.get("gpu", "?")}  suite={header.get("suite", "?")}  commit={header.get("commit", "?")}'
    ax.set_title(title + f'\n{header.get("date_utc", "")}', fontsize=9)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out_path, dpi=120)
    plt.close(fig)
    return out_path


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("json", help="result file written by `hopgemm bench`")
    parser.add_argument("--out", help="PNG path (default: the JSON path with .png)")
    parser.add_argument("--log", action="store_true", help="logarithmic TFLOPS axis (small-M rows are tiny)")
    args = parser.parse_args(argv)
    with open(args.json, encoding="utf-8") as f:
        report = json.load(f)
    out = args.out or os.path.splitext(args.json)[0] + ".png"
    print(plot(report, out, args.log))
    return 0


if __name__ == "__main__":
    sys.exit(main())
