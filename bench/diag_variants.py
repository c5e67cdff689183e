"""Diagnostic copies of the device headers, each with one part of the FP8 GEMM kernel taken out, for timing
against the real headers with scripts/ab_headers.sh (their results are wrong on purpose; never ship them).

    python3 bench/diag_variants.py [nopromote] [nomma] [nostore] [notma] [noreaders] [nosfbcopy] [plainstore]
                                                                   -> .device/diag_<name>/ (an include/ copy)
    then on the GPU machine (carry the trees):
    scripts/ab_headers.sh .device/diag_nopromote,.device/diag_nostore 3 4096x7168x16384 ...

nopromote: no promotion at run time. The promotion stays in the code behind a condition the compiler cannot
           decide (params.m >= 0): ptxas deletes WGMMAs whose results nothing reads, and an empty asm does not
           count as a reader once it reaches SASS.
nomma:     no WGMMA and no promotion: the TMA loads, barriers, scale reads and the epilogue alone.
nostore:   no D store at run time, behind the same kind of condition, so nothing upstream is deleted.
notma:     the epilogue writes the staged D tile to shared memory as usual but issues no TMA store (no global
           write): with nostore, it splits the epilogue's cost into its shared-memory part and the store itself.
noreaders: 1D2D math threads do not arrive on the empty barrier for their reads of the B scales (the lane-0
           release after the __syncwarp remains: correct in practice, but racecheck reports the refill).
plainstore: accumulating (1D1D FP32) tiles are stored with a plain TMA store instead of the TMA reduce-add (C is
           not added): the cost of the reduction in L2 against a plain write of the same bytes.
nosfbcopy: 1D2D B scales are never copied into the stages (no cp.async, no 32 arrivals on the full barrier):
           the cost of the per-stage scale path.
Each patch is anchored on exact kernel text and fails loudly when the kernel no longer contains it.
"""
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KERNEL = "hopgemm/device/kernels/sm90_fp8_gemm.cuh"
STORE_TILE = "hopgemm/device/epilogue/sm90_store_tile.cuh"

PROMOTE = ("    auto promote = [&](float (&f)[kBlockN / 2], const float (&a)[kBlockN / 2], const RowScales& r, "
           "const ColScales& c) {\n")
ISSUE = "    auto issue_mma = [&](float (&a)[kBlockN / 2], u32 s, int w) {\n"
STORE = "      if (!skip_store)\n        epilogue::store_tile<"
TMA_ISSUE = "    if (thread == 0) {\n#pragma unroll\n      for (int al = 0; al < kAtomsPerPass; ++al) {\n"

# name -> [(file under include/, anchor, replacement)].
PATCHES = {
    "nopromote": [(KERNEL, PROMOTE, PROMOTE + "      if (params.m >= 0) return;  // DIAGNOSTIC: no promotion (never false at run time)\n")],
    "nomma": [(KERNEL, ISSUE, ISSUE + "      if (true) return;  // DIAGNOSTIC: no WGMMA\n"),
              (KERNEL, PROMOTE, PROMOTE + "      if (true) return;  // DIAGNOSTIC: no promotion\n")],
    "nostore": [(KERNEL, STORE, "      if (params.m < 0)  // DIAGNOSTIC: no D store (never true at run time)\n"
                 "        epilogue::store_tile<")],
    "noreaders": [(KERNEL, "  constexpr bool kReadersArrive = !k1D1D;\n",
                   "  constexpr bool kReadersArrive = false;  // DIAGNOSTIC: no per-thread reader arrivals\n")],
    "nosfbcopy": [(KERNEL, "  constexpr bool kUsesCpAsync = !kSfbTma;",
                   "  constexpr bool kUsesCpAsync = k1D1D && !kSfbTma;  // DIAGNOSTIC: 1D2D B scales never copied\n"
                   "  //")],
    "plainstore": [(STORE_TILE, "        else if constexpr (kAccumulate)\n",
                    "        else if constexpr (kAccumulate && kElem == 0)  // DIAGNOSTIC: never; plain store\n")],
    "notma": [(STORE_TILE, TMA_ISSUE, TMA_ISSUE.replace("thread == 0", "thread == 0 && tma_d == nullptr") .replace(
        "{\n#pragma", "{  // DIAGNOSTIC: no TMA store (tma_d is never null)\n#pragma", 1))],
}


def make(name):
    dst = ROOT / ".device" / f"diag_{name}"
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(ROOT / "include", dst)
    for file, anchor, replacement in PATCHES[name]:
        path = dst / file
        text = path.read_text()
        if text.count(anchor) != 1:
            sys.exit(f"{name}: anchor not found exactly once in {file}:\n{anchor}")
        path.write_text(text.replace(anchor, replacement))
    print(f"{dst.relative_to(ROOT)}: {name}")


def main():
    names = sys.argv[1:] or list(PATCHES)
    for name in names:
        if name not in PATCHES:
            sys.exit(f"unknown variant {name}; known: {', '.join(PATCHES)}")
        make(name)


if __name__ == "__main__":
    main()
