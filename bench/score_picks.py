"""Score the heuristics' real picks (over the whole candidate space) on measured tune logs, for two builds.

    python bench/score_picks.py OLD/hopgemm NEW/hopgemm

bench/fit_heuristics.py scores the model's argmin over the candidates a log measured, which flatters a model whose
pick lies outside them. Here each build's `hopgemm explain --shape role:MxNxK --top 1` gives the model's own top pick
(the tuned table ignored); a pick is scored by its measured time over the best measured, and picks the log never
measured are counted apart. The sets are the 2026-11-22 tune logs in bench/results.
"""
import importlib.util
import math
from pathlib import Path
import re
import subprocess
import sys

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
_spec = importlib.util.spec_from_file_location("fit_heuristics", HERE / "fit_heuristics.py")
fit_heuristics = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fit_heuristics)

# name: (candidates log, summary, candidates per shape for logs without shape headers)
SETS = {
    "mid-m": ("h100-2026-11-22-tune-mid-m-candidates.log", "h100-2026-11-22-mid-m.txt", 80),
    "decode": ("h100-2026-11-22-tune-decode-candidates.log", "h100-2026-11-22-decode-m.txt", 80),
    "tune40": ("h100-2026-11-22-tune40-fwd-candidates.log", "h100-2026-11-22-tune40-fwd.log", 40),
    "heldout": ("h100-2026-11-22-heldout-candidates.log", "h100-2026-11-22-heldout-summary.txt", 40),
    "heldout2": ("h100-2026-11-22-heldout2-candidates.log", "h100-2026-11-22-heldout2-summary.txt", 40),
    "heldout3": ("h100-2026-11-22-heldout3-candidates.log", "h100-2026-11-22-heldout3-summary.txt", 80),
    "wgrad-held": ("h100-2026-11-22-heldout-wgrad-candidates.log", "h100-2026-11-22-heldout-wgrad-summary.txt", 150),
    # At a299eef, after three math warpgroups, phantom tiles and the 1D1D column-scale term.
    "heldout4": ("h100-2026-11-22-heldout4-candidates.log", "h100-2026-11-22-heldout4-summary.txt", 40),
    # At 17dd8c5: the decode and mid-M log shapes re-measured with the all-at-once split-K reads (75 shapes).
    "split-logs": ("h100-2026-11-22-tune-split-logs-candidates.log", "h100-2026-11-22-tune-split-logs-summary.txt", 40),
    # Fresh shapes at cd94add (scripts/validate_model.sh).
    "heldout5": ("h100-2026-11-22-heldout5-candidates.log", "h100-2026-11-22-heldout5-summary.txt", 40),
    # Fresh shapes at a2d0786 (after the 192x128 tie rule).
    "heldout6": ("h100-2026-11-22-heldout6-candidates.log", "h100-2026-11-22-heldout6-summary.txt", 40),
    # Fresh shapes at 5a03387 (after A's last-row box; six of ten with a partly empty tile row).
    "heldout7": ("h100-2026-11-22-heldout7-candidates.log", "h100-2026-11-22-heldout7-summary.txt", 40),
    # Fresh weight-gradient shapes at a1e992f (1D1D, FP32 D += A B^T).
    "wgrad-held2": ("h100-2026-11-22-heldout-wgrad2-candidates.log", "h100-2026-11-22-heldout-wgrad2-summary.txt", 40),
}


def tile_key(c):
    return (c["bm"], c["bn"], c["cm"], c["cn"], c["ks"])


def model_pick(cli, row):
    """(block_m, block_n, cluster_m, cluster_n, k_splits) of the build's top model candidate for the row's shape."""
    text = subprocess.run([cli, "explain", "--shape", f"{row['role']}:{row['m']}x{row['n']}x{row['k']}", "--top", "1"],
                          capture_output=True, text=True, check=True).stdout
    line = next(l for l in text.splitlines() if "model #1:" in l)
    bm, bn = re.search(r"block_m=(\d+), block_n=(\d+)", line).groups()
    cm, cn = re.search(r"cluster=(\d)x(\d)", line).groups()
    ks = re.search(r"k_splits=(\d+)", line).group(1)
    return tuple(int(x) for x in (bm, bn, cm, cn, ks))


def score(cli, rows):
    """Geomean and worst of (pick's measured time / best measured), and the shapes whose pick was not measured."""
    ratios, unmeasured = [], []
    for row in rows:
        pick = model_pick(cli, row)
        measured = {tile_key(c): c["us"] for c in row["cands"]}
        if pick in measured:
            ratios.append(measured[pick] / min(measured.values()))
        else:
            unmeasured.append(f"{row['m']}x{row['n']}x{row['k']}: {pick}")
    geomean = math.exp(sum(map(math.log, ratios)) / len(ratios)) if ratios else 0.0
    return geomean, max(ratios, default=0.0), unmeasured


def main():
    old_cli, new_cli = sys.argv[1], sys.argv[2]
    for name, (cands, summary, top) in SETS.items():
        rows = {}
        for row in fit_heuristics.load(RESULTS / cands, RESULTS / summary, top):
            rows.setdefault((row["role"], row["m"], row["n"], row["k"]), row)  # one per shape
        rows = list(rows.values())
        old, new = score(old_cli, rows), score(new_cli, rows)
        print(f"{name:10s} old {old[0]:.3f} worst {old[1]:.2f} unmeasured {len(old[2])}/{len(rows)} | "
              f"new {new[0]:.3f} worst {new[1]:.2f} unmeasured {len(new[2])}/{len(rows)}  {new[2][:4]}")


if __name__ == "__main__":
    main()
