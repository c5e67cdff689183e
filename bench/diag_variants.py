"""Diagnostic copies of the device headers, each with one part of the FP8 GEMM kernel taken out, for timing
against the real headers with scripts/ab_headers.sh (their results are wrong on purpose; never ship them).

    python3 bench/diag_variants.py [nopromote] [nomma] [nostore]      -> .device/diag_<name>/ (an include/ copy)
    then on the GPU machine (carry the trees):
    scripts/ab_headers.sh .device/diag_nopromote,.device/diag_nostore 3 4096x7168x16384 ...

nopromote: no promotion at run time. The promotion stays in the code behind a condition the compiler cannot
           decide (params.m >= 0): ptxas deletes WGMMAs whose results nothing reads, and an empty asm does not
           count as a reader once it reaches SASS.
nomma:     no WGMMA and no promotion: the TMA loads, barriers, scale reads and the epilogue alone.
nostore:   no D store at run time, behind the same kind of condition, so nothing upstream is deleted.
Each patch is anchored on exact kernel text and fails loudly when the kernel no longer contains it.
"""
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KERNEL = "hopgemm/device/kernels/sm90_fp8_gemm.cuh"

PROMOTE = ("    auto promote = [&](float (&f)[kBlockN / 2], const float (&a)[kBlockN / 2], const RowScales& r, "
           "const ColScales& c) {\n")
ISSUE = "    auto issue_mma = [&](float (&a)[kBlockN / 2], u32 s, int w) {\n"
STORE = "      if (!skip_store)\n        epilogue::store_tile<"

PATCHES = {
    "nopromote": [(PROMOTE, PROMOTE + "      if (params.m >= 0) return;  // DIAGNOSTIC: no promotion (never false at run time)\n")],
    "nomma": [(ISSUE, ISSUE + "      if (true) return;  // DIAGNOSTIC: no WGMMA\n"),
              (PROMOTE, PROMOTE + "      if (true) return;  // DIAGNOSTIC: no promotion\n")],
    "nostore": [(STORE, "      if (params.m < 0)  // DIAGNOSTIC: no D store (never true at run time)\n"
                 "        epilogue::store_tile<")],
}


def make(name):
    dst = ROOT / ".device" / f"diag_{name}"
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(ROOT / "include", dst)
    path = dst / KERNEL
    text = path.read_text()
    for anchor, replacement in PATCHES[name]:
        if text.count(anchor) != 1:
            sys.exit(f"{name}: anchor not found exactly once in {KERNEL}:\n{anchor}")
        text = text.replace(anchor, replacement)
    path.write_text(text)
    print(f"{dst.relative_to(ROOT)}: {name}")


def main():
    names = sys.argv[1:] or list(PATCHES)
    for name in names:
        if name not in PATCHES:
            sys.exit(f"unknown variant {name}; known: {', '.join(PATCHES)}")
        make(name)


if __name__ == "__main__":
    main()
