"""The FP8 GEMM kernels the heuristics can pick, enumerated on the CPU with the library's own heuristics
(hopgemm._C._fp8_gemm_config: the tuning table's row or the cost model's choice, exactly as the ops make it), the ones
the GPU runs (tests/gpu/test_kernel_variants.py) and the small problem on which each is forced by name.

A kernel is one compiled configuration (every Sm90Fp8GemmConfig field; the launch parameters num_sms and raster_band
are run-time values of the same cubin). The grid covers every op family (dense in every recipe, output type,
accumulation and scale layout; M-grouped with the group-ids layout at three alignments and with row ranges; K-grouped),
from decode to prefill sizes, group counts 1-256, on 132 and 114 SMs, plus every problem of the tuning table: about
4,400 kernels, too many to compile and run in one GPU session. They differ mostly in tile width crossed with everything
else, so the GPU runs one kernel of every variant (variant_key: the code path, i.e. the configuration without its ring
depth and with the tile width reduced to the one code choice it makes) such that every tile shape of every layout
(tile_key) is among them as well.

The execution problem of a kernel keeps everything that is not a tunable field (so the forced configuration is the
kernel itself, which tests/python/test_kernel_variants.py checks for every kernel on the CPU) and is small: odd tile
counts in M and N (a B- or A-sharing pair with a phantom partner), a K that is not a multiple of 128 (dense) and long
enough for every split and for the B-scale register chunks to turn over, seven persistent clusters (several units per
CTA; every K-grouped CTA wraps its ring of descriptor slots).
"""
import itertools
import os
import re
from collections import Counter
from dataclasses import dataclass
from typing import Dict, List, Tuple

import hopgemm

TUNABLE = ("block_m", "block_n", "num_stages", "cluster_m", "cluster_n", "promote_overlap", "d_passes", "d_in_stage",
           "k_splits", "sfb_regs", "sf_chunks")
LAUNCH = ("num_sms", "raster_band")
OPS = {0: "gemm", 1: "m_grouped_ids", 2: "m_grouped_ranges", 3: "k_grouped"}  # by the config's grouping field
SM_COUNTS = (132, 114)  # H100 SXM / H800 and H100 PCIe

DENSE_M = (1, 8, 33, 64, 96, 128, 200, 256, 384, 640, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 16384)
DENSE_N = (256, 576, 1024, 1536, 2112, 3072, 4096, 5120, 7168, 12288, 24576)
DENSE_K = (128, 512, 1024, 2048, 4096, 7168, 16384)
GROUP_ROWS = (1, 8, 32, 64, 128, 192, 256, 384, 512, 1024, 2048, 4096, 8192)
GROUPED_N = (256, 512, 1024, 2048, 3072, 4096, 6144, 7168)
GROUPED_K = (128, 512, 1024, 2048, 4096, 7168)
GROUP_COUNTS = (1, 2, 4, 8, 16, 32, 64, 128, 256)
K_GROUPED_MN = (128, 256, 512, 1024, 2048, 4096, 7168)
K_GROUPED_K = (128, 256, 512, 1024, 2048, 4096, 8192)
K_GROUPED_COUNTS = (1, 2, 4, 8, 16, 32, 64)

TUNED_TABLE = os.path.join(os.path.dirname(__file__), "..", "..", "src", "heuristics", "sm90_fp8_gemm_tuned.inc")


def dense_layouts() -> List[Dict[str, bool]]:
    """Every call form of fp8_gemm_nt the heuristics tell apart: recipe, output type, accumulation, A's (and for 1D1D
    B's) scales row-major or MN-major, row-major scales TMA-loadable (16-byte rows) or not."""
    out = []
    for recipe_1d1d, fp32_out, accumulate, sfa_row, sfb_row, aligned in itertools.product(*[(False, True)] * 6):
        if not recipe_1d1d and not sfb_row:
            continue  # 1D2D reads its block scales alike in either layout
        if not aligned and not (sfa_row or (recipe_1d1d and sfb_row)):
            continue  # no row-major per-row scales: nothing to align
        out.append(dict(recipe_1d1d=recipe_1d1d, fp32_out=fp32_out, accumulate=accumulate, sfa_row_major=sfa_row,
                        sfb_row_major=sfb_row, scale_rows_aligned=aligned))
    return out


def tuned_problems() -> List[Tuple[Dict, int]]:
    """The problems of the tuning table (src/heuristics/sm90_fp8_gemm_tuned.inc) as (spec, num_sms): the rows answer
    exactly these problems, with configurations the grid may not reach."""
    if not os.path.exists(TUNED_TABLE):
        return []
    out = []
    row = re.compile(r"^\s*\{(\d+), (\d+), (\d+), (\d), (\d), (\d), (\d), (\d), (\d), (\d+), \{")
    with open(TUNED_TABLE) as f:
        for line in f:
            match = row.match(line)
            if not match:
                continue
            m, n, k, recipe, out_dtype, accumulate, sfa_k_major, sfb_k_major, sf_rows_tma, num_sms = map(int, match.groups())
            out.append((dict(op="gemm", m=m, n=n, k=k, recipe_1d1d=recipe == 1, fp32_out=out_dtype == 1,
                             accumulate=accumulate == 1, sfa_row_major=sfa_k_major == 1,
                             sfb_row_major=sfb_k_major == 1, scale_rows_aligned=sf_rows_tma == 1), num_sms))
    return out


def problem_grid():
    """(spec, num_sms) over every op family; spec holds _fp8_gemm_config's keyword arguments but num_sms."""
    for num_sms in SM_COUNTS:
        for layout in dense_layouts():
            for m, n, k in itertools.product(DENSE_M, DENSE_N, DENSE_K):
                yield dict(op="gemm", m=m, n=n, k=k, **layout), num_sms
        for sfa_row in (True, False):
            for rows, n, k, groups in itertools.product(GROUP_ROWS, GROUPED_N, GROUPED_K, GROUP_COUNTS):
                for align in (64, 128, 256):
                    yield dict(op="m_grouped_ids", m=rows, n=n, k=k, num_groups=groups, sfa_row_major=sfa_row,
                               group_align=align), num_sms
                yield dict(op="m_grouped_ranges", m=rows, n=n, k=k, num_groups=groups, sfa_row_major=sfa_row), num_sms
        for m, n, k, groups in itertools.product(K_GROUPED_MN, K_GROUPED_MN, K_GROUPED_K, K_GROUPED_COUNTS):
            yield dict(op="k_grouped", m=m, n=n, k=k, num_groups=groups), num_sms
    yield from tuned_problems()


@dataclass(frozen=True)
class Kernel:
    """One kernel the heuristics can pick: its config fields (launch parameters apart) and the first problem of the
    grid that picks it."""

    config: Tuple[Tuple[str, int], ...]
    example: Tuple[Tuple[str, object], ...]

    @property
    def fields(self) -> Dict[str, int]:
        return dict(self.config)

    @property
    def op(self) -> str:
        return OPS[self.fields["grouping"]]

    def describe(self) -> str:
        f = self.fields
        flags = [name for name in ("promote_overlap", "d_in_stage", "sfb_regs", "sf_chunks") if f[name]]
        return (f"{self.op} {f['block_m']}x{f['block_n']} s{f['num_stages']} c{f['cluster_m']}x{f['cluster_n']} "
                f"r{f['recipe']} o{f['out_dtype']} a{f['accumulate']} sfa{f['sfa_k_major']} sfb{f['sfb_k_major']} "
                f"split{f['k_splits']} dp{f['d_passes']}" + (" " + ",".join(flags) if flags else ""))


def enumerate_kernels() -> List[Kernel]:
    """The distinct kernels (configurations) the heuristics pick over problem_grid(), in the order first seen."""
    seen: Dict[Tuple, Kernel] = {}
    for spec, num_sms in problem_grid():
        try:
            config = hopgemm._C._fp8_gemm_config(num_sms=num_sms, **spec)
        except NotImplementedError:
            continue  # no configuration fits (none of the grid's problems, but the table is not ours to judge)
        key = tuple(sorted((name, value) for name, value in config.items() if name not in LAUNCH))
        if key not in seen:
            seen[key] = Kernel(key, tuple(sorted(dict(spec, num_sms=num_sms).items())))
    return list(seen.values())


# The problem's side of a configuration: the op, recipe, output, accumulation and scale layouts.
LAYOUT_FIELDS = ("grouping", "recipe", "out_dtype", "accumulate", "sfa_k_major", "sfb_k_major")


def variant_key(fields: Dict[str, int]) -> Tuple:
    """A kernel's code path: every field but num_stages (the ring depth, which follows from the rest) and block_n,
    of which only one choice of code remains: whether a 1D2D tile's columns can straddle two 128-column B-scale blocks
    (the per-8-column scale choice). The tile widths are covered per layout by tile_key."""
    key = {name: value for name, value in fields.items() if name not in ("num_stages", "block_n")}
    key["straddles"] = int(fields["recipe"] == 0 and 128 % fields["block_n"] != 0)
    return tuple(sorted(key.items()))


def tile_key(fields: Dict[str, int]) -> Tuple:
    """A tile shape in a layout: its WGMMA widths, epilogue swizzle and register budget with that layout's loaders."""
    return tuple(fields[name] for name in LAYOUT_FIELDS) + (fields["block_m"], fields["block_n"])


def kernels_to_run(kernels: List[Kernel]) -> List[Kernel]:
    """The kernels the GPU runs: one of every variant (code path), chosen so that together they hold as many tile
    shapes of the layouts as they can (variants with the fewest kernels choose first, each the kernel of the rarest
    tile shape not yet held), plus a kernel for each tile shape still missing. Every variant and every (layout, tile)
    pair of `kernels` is then run at least once."""
    by_variant: Dict[Tuple, List[Kernel]] = {}
    for kernel in kernels:
        by_variant.setdefault(variant_key(kernel.fields), []).append(kernel)
    kernels_of_tile = Counter(tile_key(k.fields) for k in kernels)
    chosen, tiles = [], set()
    for candidates in sorted(by_variant.values(), key=len):
        new_tiles = [c for c in candidates if tile_key(c.fields) not in tiles]
        pick = min(new_tiles, key=lambda c: kernels_of_tile[tile_key(c.fields)]) if new_tiles else candidates[0]
        chosen.append(pick)
        tiles.add(tile_key(pick.fields))
    for kernel in kernels:
        if tile_key(kernel.fields) not in tiles:
            chosen.append(kernel)
            tiles.add(tile_key(kernel.fields))
    return chosen


def mutant_probe(runs: List[Kernel]) -> List[Kernel]:
    """A few of the runs that together reach every seam scripts/mutants.py breaks: the first kernel of each op, recipe,
    output type, pairing, split-K or not and A-scale layout."""
    first = {}
    for kernel in runs:
        f = kernel.fields
        key = (kernel.op, f["recipe"], f["out_dtype"], f["cluster_m"], f["cluster_n"], f["k_splits"] > 1,
               f["sfa_k_major"])
        first.setdefault(key, kernel)
    return list(first.values())


def kernel_test_id(kernel: Kernel) -> str:
    """The kernel's parameter id in tests/gpu/test_kernel_variants.py."""
    return kernel.describe().replace(" ", "_")


# ---- where each kernel runs on the GPU ----------------------------------------------------------------------------

# The M-grouped layouts a kernel runs on (rows of the groups), chosen for odd tile counts and for pairs of m-blocks
# of two groups, of a group and padding, of a group and an invalid id, and of a group and a block past M.
IDS_RUNS = [100, 129, (-1, 128), 1, 256, (9, 128), 40, 1, 70]  # 11 blocks of 128 rows, 7 groups, id 9 invalid
PSUM_SIZES = [1, 127, 0, 129, 300, 0, 64, 5]
PACKED_SIZES = [1, 1, 200, 3, 0, 129, 64, 1, 500, 0]
MASKED_M = [0, 1, 64, 129, 256, 200, 5]  # M_max 256
# 24 k-groups, 19 non-empty: on 7 clusters each CTA enters every group, more than its ring of descriptor slots holds.
K_GROUPED_KS = [256, 0, 128, 384, 128, 0, 256, 128, 512, 128, 0, 128, 256, 128, 0, 384, 128, 128, 256, 0, 128, 640,
                128, 256]
EXECUTION_CLUSTERS = 7  # persistent clusters: several units per CTA, and an odd count


def execution_problem(kernel: Kernel) -> Dict:
    """The small problem `kernel` is forced on: _fp8_gemm_config's keyword arguments (m, n, k as the op sees them;
    for the M-grouped ops the rows per group) and `overrides` (the kernel's tunable fields and a launch on
    EXECUTION_CLUSTERS clusters), plus the shape of the tensors to build: dense m x n x k; M-grouped N and K (the layouts
    above give the rows); K-grouped M, N and K_GROUPED_KS."""
    f = kernel.fields
    cluster = f["cluster_m"] * f["cluster_n"]
    overrides = {name: f[name] for name in TUNABLE}
    overrides["num_sms"] = EXECUTION_CLUSTERS * cluster
    # Odd tile counts along M and N (the last tile partial): a pair's last tile has a phantom partner.
    m = (2 * f["cluster_m"] + 1) * f["block_m"] - 37
    n = (2 * f["cluster_n"] + 1) * f["block_n"] - (8 if f["block_n"] > 8 else 0)  # BF16 D rows of 16 bytes
    k_blocks = max(4 * f["k_splits"], 6)  # every split non-empty: (splits - 1) * ceil(blocks / splits) < blocks
    if f["sfb_regs"]:
        k_blocks = max(k_blocks, 37)  # past the first 32-k-block chunk of B scales held in registers
    op = kernel.op
    spec = dict(op=op, overrides=overrides)
    if op == "gemm":
        spec.update(m=m, n=n, k=128 * k_blocks - 64, recipe_1d1d=f["recipe"] == 1, fp32_out=f["out_dtype"] == 1,
                    accumulate=f["accumulate"] == 1, sfa_row_major=f["sfa_k_major"] == 1,
                    sfb_row_major=f["sfb_k_major"] == 1, scale_rows_aligned=True)
    elif op in ("m_grouped_ids", "m_grouped_ranges"):
        spec.update(m=256, n=n, k=128 * k_blocks, num_groups=len(PACKED_SIZES), sfa_row_major=f["sfa_k_major"] == 1)
    else:
        n = (2 * f["cluster_n"] + 1) * f["block_n"] - 4  # FP32 D rows of 16 bytes
        spec.update(m=m, n=n, k=256, num_groups=len(K_GROUPED_KS))
    return spec


def forced_config(kernel: Kernel) -> Dict[str, int]:
    """The configuration the op runs on kernel's execution problem with its overrides (launch parameters apart)."""
    spec = dict(execution_problem(kernel))
    overrides = spec.pop("overrides")
    config = hopgemm._C._fp8_gemm_config(num_sms=132, overrides=overrides, **spec)
    return {name: value for name, value in config.items() if name not in LAUNCH}
