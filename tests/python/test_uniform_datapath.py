"""The WGMMA descriptors of the FP8 GEMM mainloop stay on the uniform datapath (docs/DESIGN_NOTES.md, "The uniform
datapath (R2UR)"): where ptxas cannot prove the persistent loop warp-uniform it rebuilds every descriptor in vector
registers and moves it over with R2UR before each WGMMA (16 per k-block at 128x192; row-range kernels that did so ran
10-20% behind the dense kernel on the same tile). Code far from the loop decides it: a launch parameter read inside
the group-ids scheduler's walk was enough. So kernels of each scheduler are compiled here (NVRTC, no GPU) and their SASS
read with nvdisasm: no R2UR between the first and the last WGMMA site (40 instructions before to 5 after).

nvdisasm: $NVDISASM, else on PATH, else the nvidia-cuda-nvdisasm wheel's (scripts/setup_env.sh installs it)."""
import glob
import os
import re
import shutil
import subprocess
import sys
import sysconfig

import pytest

# (what, _fp8_gemm_config arguments, overrides): each scheduler that feeds the mainloop, in the tiles its heuristics
# pick (and DeepGEMM's K-grouped tile).
KERNELS = [
    ("dense 256x128 A-sharing pair", dict(op="gemm", m=4096, n=7168, k=16384, sfa_row_major=False), {}),
    ("group ids 128x192 A-sharing pair", dict(op="m_grouped_ids", m=33280, n=7168, k=3072, num_groups=8,
                                              sfa_row_major=False), dict(block_n=192, cluster_m=1, cluster_n=2)),
    ("group ids 128x192 B-sharing pair", dict(op="m_grouped_ids", m=33280, n=7168, k=3072, num_groups=8,
                                              sfa_row_major=False), dict(block_n=192, cluster_m=2, cluster_n=1)),
    ("group ids 128x160", dict(op="m_grouped_ids", m=33280, n=7168, k=3072, num_groups=8, sfa_row_major=False),
     dict(block_n=160, num_stages=5, cluster_m=1, cluster_n=1)),
    ("row ranges 256x128", dict(op="m_grouped_ranges", m=32768, n=6144, k=7168, num_groups=4, sfa_row_major=False),
     dict(block_m=256, block_n=128, num_stages=3, cluster_m=1, cluster_n=1)),
    ("K groups 256x104", dict(op="k_grouped", m=4096, n=7168, k=8192, num_groups=4), dict(block_m=256, block_n=104)),
    ("K groups 128x152", dict(op="k_grouped", m=4096, n=7168, k=8192, num_groups=4),
     dict(block_m=128, block_n=152, num_stages=4)),
]

COMPILE = """
import json, sys
import hopgemm
configs = []
for spec, overrides in json.loads(sys.argv[1]):
    config = hopgemm._C._fp8_gemm_config(num_sms=132, **spec)
    config.update(overrides)
    configs.append(config)
report = hopgemm._C._precompile_fp8_gemm_configs(configs, jobs=2)
assert not report.errors, report.errors
"""


def find_nvdisasm():
    for candidate in (os.environ.get("NVDISASM"), shutil.which("nvdisasm")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    # The wheel's, wherever the interpreter imports packages from (its site-packages, or one a .pth file adds).
    for site in dict.fromkeys([sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"], *sys.path]):
        for path in glob.glob(os.path.join(site or ".", "nvidia", "cu*", "bin", "nvdisasm")):
            if os.access(path, os.X_OK):
                return path
    return None


def sass_instructions(sass):
    """The instructions of an nvdisasm or cuobjdump -sass listing, in order, without addresses, encodings and
    predicates."""
    ops = [m.group(1).strip() for m in re.finditer(r"/\*[0-9a-f]{4,}\*/\s+([^;]*);", sass)]
    return [re.sub(r"^@!?U?P\w+\s+", "", op) for op in ops]


def uniform_registers_read(op):
    """The uniform registers an instruction reads: every URn among its sources (all operands of a store, barrier or
    WGMMA), a pair for a .64 instruction, and the four of a WGMMA's gdesc[URn] (A's and B's descriptors)."""
    opcode, _, operands = op.partition(" ")
    first, _, rest = operands.partition(",")
    sources = operands if opcode.startswith(("ST", "SYNCS", "HGMMA", "QGMMA", "UTMA")) else rest
    read = set()
    for m in re.finditer(r"(gdesc\[)?\bUR(\d+)\b", sources):
        n = int(m.group(2))
        read.update(range(n, n + (4 if m.group(1) else 2 if ".64" in opcode else 1)))
    return read, first.strip()


def moved_straight_back(ops, i):
    """Whether R2UR ops[i]'s uniform register is only copied back to vector registers (MOV / IMAD.U32 Rn, RZ, RZ, URx)
    before it is written again: a value on its way to a vector operand (ptxas moves a barrier wait's phase that way,
    once a pass over the stage ring), never a WGMMA descriptor."""
    dest = re.match(r"R2UR\s+UR(\d+)", ops[i])
    if not dest:
        return False
    n = int(dest.group(1))
    uses = 0
    for op in ops[i + 1:i + 200]:
        read, written = uniform_registers_read(op)
        if n in read:
            if not re.fullmatch(rf"(MOV|IMAD\.U32|IMAD\.MOV\.U32)\s+R\d+,\s*(RZ,\s*RZ,\s*)?UR{n}", op):
                return False
            uses += 1
        elif written == f"UR{n}":
            break  # written again
    return uses > 0


def r2ur_in_mma_window(sass):
    """The rule (the one place it is written; bench/sass_mainloop_r2ur.sh applies it to a whole cache): R2UR
    instructions from 40 before the first WGMMA site (QGMMA/HGMMA) to 5 after the last, less those whose uniform
    register is only copied straight back to vector registers. None if the kernel has no WGMMA."""
    ops = sass_instructions(sass)
    sites = [i for i, op in enumerate(ops) if "GMMA" in op]
    if not sites:
        return None
    window = range(max(0, sites[0] - 40), min(len(ops), sites[-1] + 6))
    return sum(ops[i].startswith("R2UR") and not moved_straight_back(ops, i) for i in window)


def disassemble(tool, cubin):
    return subprocess.run([tool, cubin], check=True, capture_output=True, text=True).stdout


def kernel_config(cubin):
    """The config a cache entry's kernel was instantiated with, read from the entry's kernel.cu."""
    with open(os.path.join(os.path.dirname(cubin), "kernel.cu")) as f:
        found = re.search(r"Config\{[^}]*\}", f.read())
    return found.group(0) if found else None


@pytest.fixture(scope="module")
def cubins(tmp_path_factory):
    import json

    cache = tmp_path_factory.mktemp("jit-cache")
    args = json.dumps([[spec, overrides] for _, spec, overrides in KERNELS])
    subprocess.run([sys.executable, "-c", COMPILE, args], check=True, timeout=600,
                   env=dict(os.environ, HOPGEMM_CACHE_DIR=str(cache)))
    found = {kernel_config(cubin): cubin for cubin in glob.glob(os.path.join(cache, "kernels", "*", "kernel.cubin"))}
    assert len(found) == len(KERNELS), sorted(found)
    return found


def test_no_r2ur_around_the_wgmma_sites(cubins):
    tool = find_nvdisasm()
    assert tool, "no nvdisasm: set NVDISASM, or pip install nvidia-cuda-nvdisasm (scripts/setup_env.sh does)"
    counts = {config: r2ur_in_mma_window(disassemble(tool, cubin)) for config, cubin in cubins.items()}
    assert None not in counts.values(), f"a kernel without WGMMA: {counts}"
    assert all(n == 0 for n in counts.values()), {c: n for c, n in counts.items() if n}


def test_the_window_rule():
    """The rule itself, on listings written out: R2UR inside the window counts, outside it does not."""
    def listing(ops):
        return "\n".join(f"        /*{16 * i:04x}*/                   {op} ;  /* 0x000 */" for i, op in enumerate(ops))

    body = ["R2UR UR4, R2"] + ["NOP"] * 45 + ["R2UR UR5, R3", "QGMMA.64x128x32.F32.E4M3.E4M3 R24, gdesc[UR4], R24",
                                               "R2UR UR6, R4", "HGMMA.64x128x16.F32.BF16 R24, gdesc[UR8], R24"]
    assert r2ur_in_mma_window(listing(body + ["NOP"] * 5 + ["R2UR UR7, R5"])) == 2
    assert r2ur_in_mma_window(listing(body + ["NOP"] * 4 + ["R2UR UR7, R5"])) == 3
    assert r2ur_in_mma_window(listing(["R2UR UR4, R2", "EXIT"])) is None
    # A uniform register only copied straight back to a vector register (a barrier phase) does not count; one a WGMMA
    # descriptor reads does, predicated or not.
    sites = ["QGMMA.64x128x32.F32.E4M3.E4M3 R24, gdesc[UR8], R24"]
    assert r2ur_in_mma_window(listing(["R2UR UR12, R2", "MOV R7, UR12"] + sites)) == 0
    assert r2ur_in_mma_window(listing(["@P0 R2UR UR9, R2"] + sites)) == 1
