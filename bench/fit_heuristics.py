"""Refit the FP8 GEMM cost model's constants (src/heuristics/{cost_model,sm90_fp8_gemm}.cpp) to `hopgemm tune` measurements.

    python bench/fit_heuristics.py CANDIDATES.log SUMMARY.txt TOP [CANDIDATES.log SUMMARY.txt TOP ...]
    python bench/fit_heuristics.py --score tile_overhead=2.08,launch=6.69,... CANDIDATES.log SUMMARY.txt TOP ...
    python bench/fit_heuristics.py --only eff_1d1d,odd_n_1d1d CANDIDATES.log SUMMARY.txt TOP ...

CANDIDATES.log is tune's stderr (one line per measured candidate, in plan order, after a "shape ...: C candidates"
header per shape), SUMMARY.txt its stdout (one line per shape), TOP the --top it ran with (the per-shape count for
logs without headers). The script mirrors predict_us() in Python, reports how far the current
constants are from the measurements (log error, and the model pick's measured time over the best measured), then
searches the constants coordinate-wise for a better log error and prints them. Only pure-Python + numpy.
"""
import math
from pathlib import Path
import re
import sys

import numpy as np

CAND = re.compile(r"\s+([\d.]+) us\s+Sm90Fp8GemmConfig\(block_m=(\d+), block_n=(\d+), stages=(\d+), cluster=(\d)x(\d), "
                  r"k_splits=(\d+), num_sms=(\d+)")

SHAPE = re.compile(r"shape (\w+):(\d+)x(\d+)x(\d+): (\d+) candidates")

# The model's constants as src/heuristics defines them (the constexpr doubles of the shared cost model and of the FP8
# GEMM family, by name), so this mirror of predict() cannot drift from them.
MODEL_SOURCES = [Path(__file__).resolve().parent.parent / "src" / "heuristics" / name
                 for name in ("cost_model.hpp", "cost_model.cpp", "sm90_fp8_gemm.cpp")]
CPP_NAMES = dict(peak="kE4m3PeakTflops", dram="kDramGBps", l2="kL2GBps", l2_1d1d="k1D1DL2GBps", ingress="kSmIngressGBps",
                 sms_full_dram="kSmsForFullDram",
                 tile_overhead="kTileOverheadUs", launch="kLaunchUs", kblock_floor="kKBlockFloorUs",
                 kblock_floor_1wg="kOneWgKBlockFloorUs", floor_odd_1wg="kOneWgOddNFloorFactor", splitk_fixed="kSplitKFusedFixedUs",
                 partials_read="kSplitKPartialsReadFactor", eff_1wg="kOneWgEfficiency", eff_2wg="kTwoWgEfficiency",
                 eff_3wg="kThreeWgEfficiency",
                 odd_n="kOddNEfficiency", eff_1d1d="k1D1DEfficiency", odd_n_1d1d="k1D1DOddNEfficiency",
                 colsmem_1d1d="k1D1DColScalesInSmemEfficiency")
# splitk_fixed is the fused split's fixed cost: since 35cd048 every split candidate the heuristics offer is fused,
# so tune logs from then on measure only that form.


def read_constants():
    defined = dict(re.findall(r"constexpr double (k\w+) = ([\d.]+);", "".join(p.read_text() for p in MODEL_SOURCES)))
    return {key: float(defined[name]) for key, name in CPP_NAMES.items()}


CURRENT = read_constants()


def load(cands_path, summary_path, top):
    text = open(cands_path).read().splitlines()
    shapes = [l.split() for l in open(summary_path) if re.match(r"(fwd|dgrad|wgrad)\s", l)]
    rows = []

    def add(role, m, n, k, lines):
        group = []
        for c in (CAND.match(l) for l in lines):
            if not c:
                continue
            us, bm, bn, st, cm, cn, ks, sms = (float(x) for x in c.groups())
            group.append(dict(us=us, bm=int(bm), bn=int(bn), cm=int(cm), cn=int(cn), ks=int(ks), sms=int(sms)))
        rows.append(dict(role=role, m=m, n=n, k=k, cands=group))

    headers = [(i, SHAPE.match(l)) for i, l in enumerate(text) if SHAPE.match(l)]
    if headers:
        # "shape ROLE:MxNxK: C candidates" headers (tune writes them since 2026-11-22): each shape's lines follow
        # its header; a shape without a summary line (every candidate refused) is left out.
        summarised = {(s[0], int(s[1]), int(s[2]), int(s[3])) for s in shapes}
        for j, (i, h) in enumerate(headers):
            key = (h.group(1), int(h.group(2)), int(h.group(3)), int(h.group(4)))
            end = headers[j + 1][0] if j + 1 < len(headers) else len(text)
            if key in summarised:
                add(*key, text[i + 1:end])
        return rows
    # Older logs: exactly TOP candidate lines per summary line, in order.
    cands = [l for l in text if CAND.match(l)]
    for j, s in enumerate(shapes):
        add(s[0], int(s[1]), int(s[2]), int(s[3]), cands[j * top:(j + 1) * top])
    assert len(shapes) * top == len(cands), (cands_path, len(shapes) * top, len(cands))
    return rows


def predict(P, prob, c):
    wgrad = prob["role"] == "wgrad"
    # A cluster's odd tile count runs a phantom tile too (the scheduler pads each axis to the cluster).
    tiles_m = math.ceil(math.ceil(prob["m"] / c["bm"]) / c["cm"]) * c["cm"]
    tiles_n = math.ceil(math.ceil(prob["n"] / c["bn"]) / c["cn"]) * c["cn"]
    units = tiles_m * tiles_n * c["ks"]
    waves = math.ceil(units / c["sms"])
    k_blocks = math.ceil(prob["k"] / 128)
    unit_kb = math.ceil(k_blocks / c["ks"])
    math_cycles = c["bn"] / 2.0
    smem_cycles = (64.0 * 32 + c["bn"] * 32.0) / 128.0
    eff = min(1.0, math_cycles / smem_cycles)
    if c["bn"] % 32:
        eff *= P["odd_n_1d1d"] if wgrad else P["odd_n"]
    eff *= P["eff_1wg"] if c["bm"] == 64 else P["eff_3wg"] if c["bm"] == 192 else P["eff_2wg"]
    if wgrad:
        eff *= P["eff_1d1d"]
        # col_scales_in_regs (sm90_fp8_gemm_types.cuh) with the heuristics' promote_overlap rule for 1D1D.
        overlap = (c["bm"] <= 128 and c["bn"] <= 128) or (c["bm"] == 256 and c["bn"] <= 96)
        row_waves = 2 if c["bm"] == 256 else 1
        if row_waves * c["bn"] // 2 + (2 if overlap else 1) * c["bn"] // 2 + c["bn"] // 4 > 200:
            eff *= P["colsmem_1d1d"]
    per_sm = P["peak"] / c["sms"] * eff
    kb_us = 2.0 * c["bm"] * c["bn"] * 128 / (per_sm * 1e12) * 1e6
    floor = P["kblock_floor_1wg"] * (P["floor_odd_1wg"] if c["bn"] % 32 else 1.0) if c["bm"] == 64 else P["kblock_floor"]
    compute = waves * (unit_kb * max(kb_us, floor) + P["tile_overhead"])
    d_bytes = (4.0 if wgrad else 2.0) * prob["m"] * prob["n"] * (2 if wgrad else 1)
    partial = 4.0 * c["ks"] * prob["m"] * prob["n"]
    out = partial if c["ks"] > 1 else d_bytes
    dram_bytes = prob["m"] * prob["k"] + prob["n"] * prob["k"] + out
    busy = min(units, c["sms"])
    dram = dram_bytes / (P["dram"] * 1e3 * min(1.0, busy / P["sms_full_dram"]))
    a = c["bm"] * unit_kb * 128.0 / (2 if c["cn"] == 2 else 1)
    b = c["bn"] * unit_kb * 128.0 / (2 if c["cm"] == 2 else 1)
    l2 = units * (a + b) / ((P["l2_1d1d"] if wgrad else P["l2"]) * 1e3)
    ingress = waves * unit_kb * (c["bm"] + c["bn"]) * 128.0 / (P["ingress"] * 1e3)
    # Split candidates are all fused: the last split reads the others' partial tiles through its SM.
    wg_rows = 64 if c["bm"] in (64, 192) else c["bm"] / 2  # rows per math warpgroup
    last_split = P["partials_read"] * (c["ks"] - 1) * wg_rows * c["bn"] * 4.0 / (P["ingress"] * 1e3)
    reduce = P["splitk_fixed"] + last_split + (partial + d_bytes) / (P["dram"] * 1e3) if c["ks"] > 1 else 0.0
    return P["launch"] + max(compute, dram, l2, ingress) + reduce


def score(P, rows):
    errs, picks = [], []
    for r in rows:
        preds = [predict(P, r, c) for c in r["cands"]]
        errs += [math.log(p / c["us"]) for p, c in zip(preds, r["cands"])]
        best = min(c["us"] for c in r["cands"])
        picks.append(r["cands"][int(np.argmin(preds))]["us"] / best)
    return float(np.sqrt(np.mean(np.square(errs)))), float(np.exp(np.mean(np.log(picks)))), max(picks)


def main():
    args = sys.argv[1:]
    # --score k=v,k=v: no fit; score these constants (over the current ones) on the given logs, e.g. a refit's
    # constants on held-out shapes (scripts/validate_model.sh).
    given = None
    if args and args[0] == "--score":
        given = dict(CURRENT, **{kv.split("=")[0]: float(kv.split("=")[1]) for kv in args[1].split(",")})
        args = args[2:]
    # --only k,k: fit just these constants (e.g. the 1D1D terms on weight-gradient logs, leaving the rest as fitted
    # on the forward shapes).
    only = None
    if args and args[0] == "--only":
        only = args[1].split(",")
        args = args[2:]
    rows = []
    for i in range(0, len(args), 3):
        rows += load(args[i], args[i + 1], int(args[i + 2]))
    print(f"{len(rows)} shapes, {sum(len(r['cands']) for r in rows)} measured candidates")
    rms, pick, worst = score(CURRENT, rows)
    print(f"current: rms log error {rms:.3f}, model pick / best measured geomean {pick:.3f} (worst {worst:.2f})")
    if given is not None:
        rms, pick, worst = score(given, rows)
        print(f"given  : rms log error {rms:.3f}, model pick / best measured geomean {pick:.3f} (worst {worst:.2f})")
        return
    P = dict(CURRENT)
    fit_keys = ["tile_overhead", "launch", "kblock_floor", "kblock_floor_1wg", "splitk_fixed", "partials_read", "eff_1wg", "eff_2wg", "odd_n", "l2", "ingress"]
    if any(r["role"] == "wgrad" for r in rows):  # unconstrained (and meaningless) without 1D1D measurements
        fit_keys += ["eff_1d1d", "odd_n_1d1d", "l2_1d1d"]
    if only is not None:
        fit_keys = only
    # Coordinate search on the log error, tie-broken by the pick quality; a few sweeps of multiplicative steps.
    for _ in range(6):
        for key in fit_keys:
            best_val, best_obj = P[key], None
            for f in [0.5, 0.67, 0.8, 0.9, 0.95, 1.0, 1.05, 1.1, 1.25, 1.5, 2.0]:
                trial = dict(P)
                trial[key] = P[key] * f
                if key.startswith(("eff", "odd")) and trial[key] > 1.0:
                    continue
                rms, pick, _ = score(trial, rows)
                obj = rms + 0.5 * math.log(pick)
                if best_obj is None or obj < best_obj - 1e-9:
                    best_val, best_obj = trial[key], obj
            P[key] = best_val
    rms, pick, worst = score(P, rows)
    print(f"fitted : rms log error {rms:.3f}, model pick / best measured geomean {pick:.3f} (worst {worst:.2f})")
    for key in fit_keys:
        print(f"  {key:14s} {CURRENT[key]:9.3f} -> {P[key]:9.3f}")


if __name__ == "__main__":
    main()
