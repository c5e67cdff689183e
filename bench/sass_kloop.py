#!/usr/bin/env python3
"""The math k-loop of every cached GEMM kernel, from its SASS: the innermost backward-branch loop that holds QGMMA/HGMMA
sites, and what it costs per k-block (issue 27: DeepGEMM's 256x128 kernel unrolls 8 k-blocks a trip, 64 QGMMA sites,
one loop test and branch per 8 blocks). No GPU needed:

    HOPGEMM_CACHE_DIR=/tmp/kc build/hopgemm precompile --suite deepseek-v3     (and wgrad-pr95, deepseek-v3-moe)
    bench/sass_kloop.py /tmp/kc [--all-loops]

cuobjdump: the CUDA toolkit's, or CUOBJDUMP=path (e.g. triton's bundled one). Prints per kernel its config, registers
and MMA sites, and the loop's totals: instructions, MMA sites, BRA, ISETP (with UISETP), UIADD3, SYNCS (barrier waits
and arrivals). Per k-block: divide by the loop's k-blocks, its MMA sites over the sites of one k-block (BLOCK_K 128 /
32 per WGMMA = 4 per 64-row wave: 8 for a 256-row tile's two waves a warpgroup)."""
import argparse
import os
import pathlib
import re
import subprocess
import sys

INSN = re.compile(r"\s*/\*([0-9a-f]{4,})\*/\s*(.*?)\s*;")
BRANCH = re.compile(r"\bBRA(?:\.\S+)?\s+(0x[0-9a-f]+)")
CONFIG = re.compile(r"Config\{([^}]*)\}")
COUNTED = (("BRA", r"\bBRA\b"), ("ISETP", r"ISETP"), ("UIADD3", r"UIADD3"), ("SYNCS", r"SYNCS"))


def instructions(cubin):
    tool = os.environ.get("CUOBJDUMP", "cuobjdump")
    sass = subprocess.run([tool, "-sass", str(cubin)], check=True, capture_output=True, text=True).stdout
    return [(int(m.group(1), 16), m.group(2)) for m in map(INSN.match, sass.splitlines()) if m]


def mma_loops(insns):
    """(innermost, every) (first, last) index spans of the backward-branch loops holding MMA sites, in address order;
    innermost: no such loop inside it, and none denser in MMA sites overlapping it (an unrolled k-loop and its remainder
    loop, not the unit loops around them, which ptxas may also enter in the middle of a k-loop)."""
    index = {addr: i for i, (addr, _) in enumerate(insns)}
    loops = []
    for i, (addr, text) in enumerate(insns):
        m = BRANCH.search(text)
        if m and int(m.group(1), 16) < addr and int(m.group(1), 16) in index:
            first = index[int(m.group(1), 16)]
            if any("GMMA" in t for _, t in insns[first:i + 1]):
                loops.append((first, i))
    loops.sort()
    def density(span):
        return sum("GMMA" in t for _, t in insns[span[0]:span[1] + 1]) / (span[1] - span[0] + 1)
    nest_free = [span for span in loops if not any(o != span and span[0] <= o[0] and o[1] <= span[1] for o in loops)]
    inner = [span for span in nest_free
             if not any(o[0] <= span[1] and span[0] <= o[1] and density(o) > density(span) for o in nest_free)]
    return inner, loops


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("cache", help="a JIT cache directory (HOPGEMM_CACHE_DIR)")
    p.add_argument("--all-loops", action="store_true", help="every MMA loop (the unit loops too), not only the innermost")
    args = p.parse_args()
    for cubin in sorted(pathlib.Path(args.cache).rglob("*.cubin")):
        insns = instructions(cubin)
        sites = sum("GMMA" in t for _, t in insns)
        if not sites:
            continue
        source = (cubin.parent / "kernel.cu").read_text(errors="replace") if (cubin.parent / "kernel.cu").exists() else ""
        log = (cubin.parent / "compile.log").read_text(errors="replace") if (cubin.parent / "compile.log").exists() else ""
        config = CONFIG.search(source)
        regs = re.search(r"Used (\d+) registers", log)
        print(f"{cubin.parent.name}  regs={regs.group(1) if regs else '?'}  MMA sites={sites}")
        if config:
            print("  " + re.sub(r"\s*\.?(\w+) = ", r" \1=", config.group(1)).strip())
        inner, loops = mma_loops(insns)
        for first, last in loops if args.all_loops else inner:
            body = [t for _, t in insns[first:last + 1]]
            mmas = sum("GMMA" in t for t in body)
            counts = {name: sum(bool(re.search(rx, t)) for t in body) for name, rx in COUNTED}
            print(f"  loop {insns[first][0]:#x}-{insns[last][0]:#x}: {len(body)} instructions, {mmas} MMA sites; "
                  + ", ".join(f"{name} {n}" for name, n in counts.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
