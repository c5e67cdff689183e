#!/usr/bin/env python3
"""Register-bank clashes in the promotion FFMAs of every cached FP8 GEMM kernel (SASS; no GPU needed).

    HOPGEMM_CACHE_DIR=/tmp/kc build/hopgemm precompile --suite deepseek-v3
    python3 bench/sass_promotion_banks.py /tmp/kc [--cuobjdump PATH]

Why (docs/DESIGN_NOTES.md, register banks): never-executed code in a kernel's epilogue made ptxas allocate the
promoted sums (fin) in the same register bank as the WGMMA accumulators they add (acc), so that every promotion FFMA
(fin = acc * scale + fin) read two operands from one bank; the kernel took 3.5-5.5% longer with an identical k-loop
(ncu: more dispatch stalls per issued instruction). For each kernel this prints, over its FFMAs that read a WGMMA
accumulator: how many have acc and fin in the same bank (two-bank model: register number mod 2), and how many read
any two operands from one bank after the reuse cache (an operand is served from it when the previous instruction
marked the same register in the same slot `.reuse`). Worst first.
"""
import argparse
import pathlib
import re
import subprocess


def ffmas(sass):
    ops = [m.group(1) for m in re.finditer(r"^\s+/\*[0-9a-f]{4,}\*/\s+(.*?)\s*;", sass, re.M)]
    acc_regs = set()
    for op in ops:  # the accumulator registers: WGMMA destinations, R_first .. R_first + N/2 - 1
        m = re.match(r"[QH]GMMA\.64x(\d+)x\d+\.\S+ R(\d+),", op)
        if m:
            acc_regs.update(range(int(m.group(2)), int(m.group(2)) + int(m.group(1)) // 2))
    return ops, acc_regs


def clashes(ops, acc_regs, banks=2):
    same_bank = any_clash = total = 0
    prev = None
    for op in ops:
        if not op.startswith("FFMA "):
            prev = None
            continue
        parts = [p.strip() for p in op[5:].split(",")]
        srcs = []
        for p in parts[1:4]:
            m = re.match(r"R(\d+)(\.reuse)?$", p)
            srcs.append((int(m.group(1)), bool(m.group(2))) if m else None)
        regs = [s[0] for s in srcs if s]
        if not any(r in acc_regs for r in regs[:2]):
            prev = srcs
            continue
        total += 1
        acc = next(r for r in regs[:2] if r in acc_regs)
        fin = srcs[2][0] if srcs[2] else None
        if fin is not None and acc % banks == fin % banks:
            same_bank += 1
        cached = [bool(prev and s and prev[i] and prev[i][1] and prev[i][0] == s[0]) for i, s in enumerate(srcs)]
        reads = [s[0] % banks for i, s in enumerate(srcs) if s and not cached[i]]
        any_clash += len(reads) != len(set(reads))
        prev = srcs
    return same_bank, any_clash, total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cache")
    ap.add_argument("--cuobjdump", default="cuobjdump")
    args = ap.parse_args()
    rows = []
    for cubin in pathlib.Path(args.cache).rglob("*.cubin"):
        sass = subprocess.run([args.cuobjdump, "-sass", str(cubin)], capture_output=True, text=True).stdout
        ops, acc_regs = ffmas(sass)
        if not acc_regs:
            continue
        same, clash, total = clashes(ops, acc_regs)
        src = cubin.parent / "kernel.cu"
        m = re.search(r"Sm90Fp8GemmConfig\{([^}]*)\}", src.read_text()) if src.exists() else None
        config = re.sub(r"\s*\.", "", m.group(1)).replace(" = ", "=") if m else str(cubin.parent)
        rows.append((same / max(total, 1), same, clash, total, config))
    for _, same, clash, total, config in sorted(rows, reverse=True):
        print(f"acc/fin same bank {same:3d}/{total:3d}  any clash {clash:3d}/{total:3d}  {config}")


if __name__ == "__main__":
    main()
