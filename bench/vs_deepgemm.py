"""hopgemm against DeepGEMM in one process, on the same inputs, on the same GPU (the only "faster than DeepGEMM"
claim that counts: the project's shared/anchor/README.md).

    source .anchor/build_deepgemm.sh .anchor/deepgemm-54e2261.tgz   # import deep_gemm works after this
    python bench/vs_deepgemm.py [--suites dense,contiguous,masked,kgrouped|all] [--sets SET,...]
                                [--sfa mn|row|mn,row] [--rounds 6] [--iters 10] [--shapes [SET:][G]xMxNxK,...]
                                [--jobs 12] [--out FILE|DIR] [--table FILE] [--plot [PNG]]
                                [--no-kernel-sums] [--skip-first-call] [--skip-host]
    (scripts/gpu_check.sh deepgemm does all of this on the GPU machine)

Suites (--suites, default dense) are groups of sets: dense = fwd, dgrad, wgrad; contiguous = contiguous,
contiguous-psum; masked = masked, masked-4x; kgrouped = kgrouped. --sets adds single sets (alone: only those).

Dense sets (the dense FP8 sets of the 2026-11-25 head-to-head, the project's reference/anchors_h100.md; shapes from the
suite deepseek-v3, src/api/suites.cpp, without its M = 64 forward rows):
  fwd    22 shapes: M in (1, 128, 4096) x the seven DeepSeek-V3 (N, K), and 8192^3. 1D2D: A per 1x128, B per
         128x128, BF16 D = A B^T.
  dgrad   7 shapes: (4096, K, N) for each (N, K). Same kernel family as fwd.
  wgrad   7 shapes: (N, K, 4096) for each (N, K). 1D1D: A and B per 1x128, FP32 D += A B^T (C aliases D; both
         libraries: fp8_gemm_nt(a, b, d, c=d, recipe=(1, 1, 128))). DeepGEMM's own tests time (N, 4096, K) here;
         these are the shapes hopgemm's suite and the head-to-head use.
--sfa mn: the per-row scales (A's, and B's for wgrad) MN-major and TMA-aligned, as a fused quantiser writes them
(hopgemm.get_mn_major_tma_aligned_tensor, the layout deep_gemm.get_mn_major_tma_aligned_tensor returns; DeepGEMM
takes it as it is). --sfa row: row-major as per_token_cast_to_fp8 returns them; DeepGEMM then transposes them with
an extra kernel on every call, hopgemm reads them as they are. Both libraries get the very same tensors.

Method: the inputs are random BF16 matrices quantised once (hopgemm's quantisers, DeepGEMM's numerics); each row is
checked once per scale layout (calc_diff of each library against the FP32 product of the dequantised inputs, and of
the two libraries against each other; outputs NaN-poisoned first), then timed: CUDA events around each call, the L2
flushed before it, the libraries interleaved call by call in alternating order over several rounds (time_libraries
says why events), and, as a cross-check comparable with the 2026-11-25 figures, the torch profiler's kernel sums
(KernelSums). Ratio = DeepGEMM time / hopgemm time: > 1 means hopgemm is faster. Before any timing, worker
processes (--jobs) each call both libraries once on a slice of the rows, so that DeepGEMM's NVCC compiles (2-5 s
per kernel) and hopgemm's NVRTC ones run in parallel and the timed process only loads kernels from the disk caches.
Then, once: the first call of a new shape on a fresh cache (compile + load) in a fresh process per library, and the
Python host time per call (no synchronisation in the loop).

Grouped sets (the MoE GEMMs of DeepGEMM HEAD's tests/generators.py, reference §7.3 / §7.4, its inputs built as its
generators build them; rows GxMxNxK with M the expected rows per group, K the expected K per group for kgrouped):
  contiguous       8 rows: (G, M) in ((4, 8192), (8, 4096)) x (N, K) in ((6144, 7168), (7168, 3072), (4096, 4096),
                   (4096, 2048)); group g has int(M * U(0.7, 1.3)) rows padded to 128 with -1 ids (A's padding rows
                   zero), m_grouped_fp8_gemm_nt_contiguous(a, b, d, grouped_layout).
  contiguous-psum  the same rows, grouped_layout = the unaligned cumulative ends, use_psum_layout=True.
  masked          16 rows: (G, M) in ((32, 192), (6, 1024), (32, 20), (6, 20)) x the same (N, K); A [G, 4096, K],
                   masked_m[g] = int(M * U(0.7, 1.3)), expected_m passed = int(M * 1.2) (as DeepGEMM HEAD's test).
                   The rows with M = 20 also report the bandwidth of reading B against a torch device copy timed in
                   the same run.
  masked-4x        6 rows: (G, M) in ((32, 20), (6, 20), (32, 192)) x (N, K) in ((4096, 7168), (7168, 3072)) with
                   the real rows 4x the expected ones (masked_m ~ 4 M U(0.7, 1.3)) and expected_m = int(M * 1.2), each
                   library also timed (same loop) given the right expected_m: the cost of a wrong hint.
  kgrouped         the six EP cases (G, M, N, expected K): (4, 4096, 7168, 8192), (4, 7168, 2048, 8192),
                   (8, 4096, 7168, 4096), (8, 7168, 2048, 4096), (16, 4096, 7168, 2048), (16, 7168, 2048, 2048);
                   ks[g] = align(int(K * U(0.7, 1.3)), 128), flat K-major operands cast per channel per group, FP32
                   D += A_g B_g^T with C = D: k_grouped_fp8_gemm_nt_contiguous(a, b, d, ks, ks_tensor, d).
DeepGEMM's remaining SM90 ops (--sets only, not in a suite):
  skip-head-mid    4 rows: M in (128, 4096) x (N, K) in ((32768, 512), (8192, 512)), head_splits (128, 64, 128)
                   (DeepGEMM's tests/test_attention.py): fp8_gemm_nt_skip_head_mid(a, b, d, head_splits), 1D2D,
                   D [M, N / 256 * 320] BF16, the middle columns untouched (calc_diff over the GEMM's columns).
  einsum-bhr       4 rows (G = h, M = b, N = d, K = r): (h, r, d) in ((128, 512, 128), (8, 4096, 1024)) x b in
                   (128, 4096), einsum("bhr,hdr->bhd", x, y[:, :, :r], z), BF16 (DeepGEMM's tests/test_einsum.py).
  einsum-bhd       the same heads (N = r, K = d): einsum("bhd,hdr->bhr", ...).
  fp8-einsum       2 rows: (h, r, d) = (8, 4096, 1024), b in (128, 4096), fp8_einsum("bhr,hdr->bhd", (x8, sfx),
                   (y8, sfy), z) with row-major sfx (DeepGEMM's test_fp8_bhr_hdr_bhd; DeepGEMM transposes sfx inside).
  hc-prenorm       8 rows (G = num_splits, 0 = None): m in (4096, 8192) x k in (7168, 28672), n = 24, num_splits None /
                   16: tf32_hc_prenorm_gemm(a, b, d, sqr_sum, num_splits) (DeepGEMM's test_hyperconnection.py);
                   calc_diff over d and sqr_sum summed over the splits.
  einsum-bmk       4 rows (G = s): s in (129, 4096) x (m, n, k) in ((128, 384, 128), (256, 256, 256)),
                   einsum("bmk,bnk->mn", a, b, d, c=d), FP32 d accumulated.
DeepGEMM 54e2261 (HEAD) names the layout arguments grouped_layout / ks_cpu where its SEED named them m_indices / ks:
every call passes them by position. --sfa applies to A's scales (and, for kgrouped, B's: "mn" = sf.T of the
[sum_k / 128, MN] scales, as DeepGEMM's tests pass them; "row": hopgemm takes MN-major k-grouped scales only, so its
timed call includes get_mn_major_tma_aligned_tensor of each, the transpose DeepGEMM makes inside its call). FLOPs
count valid rows only; calc_diff compares the rows a group computes. No cuBLASLt baseline for the grouped rows:
hopgemm's cuBLASLt blockwise wrappers are C++ only (`hopgemm bench`), not reachable from Python.
"""
import argparse
import datetime
import functools
import gc
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import Callable

LIBRARIES = ("hopgemm", "deepgemm")
MODULE_NAMES = {"hopgemm": "hopgemm", "deepgemm": "deep_gemm"}

# DeepSeek-V3 dense (N, K) pairs (src/api/suites.cpp kDeepseekV3NK).
DEEPSEEK_V3_NK = ((2112, 7168), (576, 7168), (24576, 1536), (32768, 512), (7168, 16384), (4096, 7168), (7168, 2048))
FORWARD_M = (1, 128, 4096)
BACKWARD_M = 4096

# The grouped suites of DeepGEMM HEAD's tests/generators.py (reference §7.4).
CONTIGUOUS_GROUPS = ((4, 8192), (8, 4096))  # (G, expected rows per group)
GROUPED_NK = ((6144, 7168), (7168, 3072), (4096, 4096), (4096, 2048))
MASKED_GROUPS = ((32, 192), (6, 1024), (32, 20), (6, 20))
MASKED_MAX_M = 4096
# masked-4x: the real rows 4x the expected (the hint DeepGEMM's README warns about), against the right hint.
MASKED_4X_GROUPS = ((32, 20), (6, 20), (32, 192))
MASKED_4X_NK = ((4096, 7168), (7168, 3072))
K_GROUPED_CASES = ((4, 4096, 7168, 8192), (4, 7168, 2048, 8192),  # EP64: (G, m, n, expected k per group)
                   (8, 4096, 7168, 4096), (8, 7168, 2048, 4096),  # EP32
                   (16, 4096, 7168, 2048), (16, 7168, 2048, 2048))  # EP16
B_READ_ROWS_M = 20  # masked rows whose B-read bandwidth is compared with the device copy's
GROUPED_WARM_JOBS = 6  # warm-up workers at most when grouped sets run (their inputs take several GB each)

FLUSH_BYTES = 256 << 20  # written before every timed call: five times the H100's 50 MB L2
BAD_DIFF = 1e-3           # DeepGEMM's own threshold (against the BF16 product); ours is the dequantised product


# ---- cases: one row's inputs ---------------------------------------------------------------------------------------


def _ceil_div(a, b):
    return (a + b - 1) // b


def _torch():
    import torch

    return torch


@dataclass
class DenseCase:
    """A [m, k] x B [n, k]^T, FP8 e4m3 with FP32 scales; `operands[layout]` = ((a8, sfa), (b8, sfb)) as the
    libraries take them for that scale layout."""

    m: int
    n: int
    k: int
    accumulate: bool  # 1D1D weight gradient: FP32 D += A B^T (C = D); else 1D2D, BF16 D = A B^T
    a8: object
    sfa_row: object
    b8: object
    sfb_row: object
    operands: dict
    c0: object  # the initial D of an accumulating case

    @property
    def flops(self):
        return 2.0 * self.m * self.n * self.k

    @property
    def bytes(self):
        """A and B read once (FP8), D written once (and read once more when accumulating)."""
        return self.m * self.k + self.n * self.k + self.m * self.n * (8 if self.accumulate else 2)

    def checked(self, d):
        """The elements of an output that calc_diff compares with reference(): all of them."""
        return d

    def new_output(self):
        """A fresh D: C's value when accumulating, else NaN (an element a kernel fails to write shows in calc_diff)."""
        torch = _torch()
        if self.accumulate:
            return self.c0.clone()
        return torch.full((self.m, self.n), float("nan"), device="cuda", dtype=torch.bfloat16)

    def reference(self):
        """FP32 (TF32 off) product of the dequantised inputs (+ C): what both kernels approximate."""
        torch = _torch()
        a = self.a8.float() * self.sfa_row.repeat_interleave(128, dim=1)[:, : self.k]
        rows_per_b_scale = 1 if self.accumulate else 128
        sfb = self.sfb_row.repeat_interleave(rows_per_b_scale, dim=0)[: self.n].repeat_interleave(128, dim=1)
        b = self.b8.float() * sfb[:, : self.k]
        ref = a @ b.T
        del a, b
        if self.accumulate:
            ref += self.c0
        torch.cuda.synchronize()
        return ref


def make_dense_case(shape, layouts, seed, accumulate):
    import hopgemm
    from hopgemm.utils import per_block_cast_to_fp8, per_token_cast_to_fp8

    torch = _torch()
    m, n, k = shape
    gen = torch.Generator(device="cuda").manual_seed(seed)
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16, generator=gen)
    b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16, generator=gen)
    a8, sfa = per_token_cast_to_fp8(a)
    b8, sfb = per_token_cast_to_fp8(b) if accumulate else per_block_cast_to_fp8(b)
    del a, b
    # D's initial value when accumulating: DeepGEMM's tests use randn * 32 (same order as A B^T here).
    c0 = torch.randn(m, n, device="cuda", dtype=torch.float32, generator=gen) * 32 if accumulate else None
    operands = {}
    for layout in layouts:
        if layout == "mn":
            sfa_arg = hopgemm.get_mn_major_tma_aligned_tensor(sfa)
            sfb_arg = hopgemm.get_mn_major_tma_aligned_tensor(sfb) if accumulate else sfb
        else:
            sfa_arg, sfb_arg = sfa, sfb
        operands[layout] = ((a8, sfa_arg), (b8, sfb_arg))
    torch.cuda.synchronize()
    return DenseCase(m, n, k, accumulate, a8, sfa, b8, sfb, operands, c0)


def call_dense(lib, case, layout, d):
    """The deep_gemm call, the same for both libraries (hopgemm is a drop-in)."""
    a, b = case.operands[layout]
    if case.accumulate:
        lib.fp8_gemm_nt(a, b, d, c=d, recipe=(1, 1, 128))
    else:
        lib.fp8_gemm_nt(a, b, d)


# ---- fp8_gemm_nt_skip_head_mid (DeepGEMM's tests/test_attention.py) --------------------------------------------------

SKIP_HEAD_MID_SPLITS = (128, 64, 128)  # (left, mid, right), as DeepGEMM's test_gemm_skip_head_mid
SKIP_HEAD_MID_SHAPES = tuple((m, n, k) for m in (128, 4096) for n, k in ((32768, 512), (8192, 512)))


@dataclass
class HeadSplitCase(DenseCase):
    """A 1D2D DenseCase whose D holds heads of left + mid + right columns: each head's left + right GEMM columns
    around `mid` untouched ones (fp8_gemm_nt_skip_head_mid)."""

    head_splits: tuple = SKIP_HEAD_MID_SPLITS

    @property
    def d_cols(self):
        left, mid, right = self.head_splits
        return self.n // (left + right) * (left + mid + right)

    def new_output(self):
        torch = _torch()
        return torch.full((self.m, self.d_cols), float("nan"), device="cuda", dtype=torch.bfloat16)

    def checked(self, d):
        """The GEMM's columns of d, [m, n] in GEMM order (the middle ones are left NaN by both libraries)."""
        torch = _torch()
        left, mid, right = self.head_splits
        heads = d.view(self.m, -1, left + mid + right)
        return torch.cat([heads[:, :, :left], heads[:, :, left + mid:]], dim=2).reshape(self.m, self.n)


def _make_einsum(expr, shape, layouts, seed):
    return make_einsum_case(expr, shape, seed)


def _make_skip_head_mid(shape, layouts, seed):
    return HeadSplitCase(**vars(make_dense_case(shape, layouts, seed, accumulate=False)))


def call_skip_head_mid(lib, case, layout, d):
    a, b = case.operands[layout]
    lib.fp8_gemm_nt_skip_head_mid(a, b, d, case.head_splits)


# ---- einsum (DeepGEMM's tests/test_einsum.py) -----------------------------------------------------------------------


@dataclass
class EinsumCase:
    """BF16 einsum `expr` over x and y into a fresh d (+ c0 when accumulating): rows (G, M, N, K) are (h, b, d, r) of
    the per-head forms, (s, m, n, k) of bmk,bnk->mn (FP32 d += the sum, c = d, DeepGEMM's accumulating form)."""

    expr: str
    groups: int
    m: int
    n: int
    k: int
    x: object
    y: object
    c0: object  # bmk,bnk->mn: d's initial value

    @property
    def flops(self):
        return 2.0 * self.groups * self.m * self.n * self.k

    @property
    def bytes(self):
        out = self.m * self.n * (8 if self.c0 is not None else 2 * self.groups)
        return 2 * (self.x.numel() + self.y.numel()) + out

    def new_output(self):
        torch = _torch()
        if self.c0 is not None:
            return self.c0.clone()
        shape = (self.m, self.groups, self.n)
        return torch.full(shape, float("nan"), device="cuda", dtype=torch.bfloat16)

    def checked(self, d):
        return d

    def reference(self):
        torch = _torch()
        if self.c0 is not None:
            return self.c0 + torch.bmm(self.x.float(), self.y.float().mT).sum(0)
        return torch.einsum(self.expr, self.x.float(), self.y.float())


def make_einsum_case(expr, shape, seed):
    torch = _torch()
    groups, m, n, k = shape
    gen = torch.Generator(device="cuda").manual_seed(seed)

    def randn(*dims):
        return torch.randn(*dims, device="cuda", dtype=torch.bfloat16, generator=gen)

    if expr == "bmk,bnk->mn":
        c0 = torch.randn(m, n, device="cuda", dtype=torch.float32, generator=gen)
        return EinsumCase(expr, groups, m, n, k, randn(groups, m, k), randn(groups, n, k), c0)
    # DeepGEMM's test slices y out of a tensor 128 wider along r.
    if expr == "bhr,hdr->bhd":  # (h, b, d, r)
        return EinsumCase(expr, groups, m, n, k, randn(m, groups, k), randn(groups, n, k + 128)[:, :, :k], None)
    return EinsumCase(expr, groups, m, n, k, randn(m, groups, k), randn(groups, k, n + 128)[:, :, :n], None)  # (h, b, r, d)


@dataclass
class Fp8EinsumCase(EinsumCase):
    """fp8_einsum("bhr,hdr->bhd") of DeepGEMM's test_fp8_bhr_hdr_bhd: x per 1x128 (row-major sfa, as quantised), y
    per 128x128 block of each head; reference() is the FP32 product of the dequantised inputs."""

    x8: tuple = None
    y8: tuple = None

    @property
    def bytes(self):
        return self.x.numel() + self.y.numel() + 2 * self.m * self.n * self.groups

    def reference(self):
        return _torch().einsum(self.expr, self.x, self.y)


def make_fp8_einsum_case(shape, layouts, seed):
    from hopgemm.utils import per_block_cast_to_fp8, per_token_cast_to_fp8

    torch = _torch()
    h, b, d, r = shape
    gen = torch.Generator(device="cuda").manual_seed(seed)
    x = torch.randn(b, h, r, device="cuda", dtype=torch.bfloat16, generator=gen)
    y = torch.randn(h, d, r, device="cuda", dtype=torch.bfloat16, generator=gen)
    sf_r = _ceil_div(r, 128)
    x8, sfx = per_token_cast_to_fp8(x.view(-1, r))
    x8, sfx = x8.view(b, h, r), sfx.view(b, h, sf_r)
    y8 = torch.empty_like(y, dtype=torch.float8_e4m3fn)
    sfy = torch.empty((h, _ceil_div(d, 128), sf_r), device="cuda", dtype=torch.float32)
    for i in range(h):
        y8[i], sfy[i] = per_block_cast_to_fp8(y[i])
    x_deq = x8.float() * sfx.repeat_interleave(128, dim=2)[:, :, :r]
    y_deq = y8.float() * sfy.repeat_interleave(128, dim=1)[:, :d].repeat_interleave(128, dim=2)[:, :, :r]
    return Fp8EinsumCase("bhr,hdr->bhd", h, b, d, r, x_deq, y_deq, None, (x8, sfx), (y8, sfy))


def call_fp8_einsum(lib, case, layout, d):
    lib.fp8_einsum(case.expr, case.x8, case.y8, d)


def call_einsum(lib, case, layout, d):
    lib.einsum(case.expr, case.x, case.y, d, c=d if case.c0 is not None else None)


# ---- tf32_hc_prenorm_gemm (DeepGEMM's tests/test_hyperconnection.py) ------------------------------------------------


@dataclass
class HcPrenormCase:
    """a [m, k] BF16, b [n, k] FP32: d = a b^T (TF32) and the squared sums of a's rows, num_splits parts (0: None). The
    output is the pair (d, sqr_sum); calc_diff compares their split sums, concatenated."""

    m: int
    n: int
    k: int
    num_splits: int
    a: object
    b: object

    @property
    def flops(self):
        return 2.0 * self.m * self.n * self.k

    @property
    def bytes(self):
        parts = max(self.num_splits, 1)
        return 2 * self.m * self.k + 4 * self.n * self.k + 4 * parts * (self.m * self.n + self.m)

    def new_output(self):
        torch = _torch()
        lead = (self.num_splits,) if self.num_splits else ()
        return (torch.full(lead + (self.m, self.n), float("nan"), device="cuda"),
                torch.full(lead + (self.m,), float("nan"), device="cuda"))

    def checked(self, out):
        torch = _torch()
        d, s = out
        if self.num_splits:
            d, s = d.sum(0), s.sum(0)
        return torch.cat([d.flatten(), s.flatten()])

    def reference(self):
        torch = _torch()
        a = self.a.float()
        return torch.cat([(a @ self.b.T).flatten(), a.square().sum(-1).flatten()])


def make_hc_prenorm_case(shape, layouts, seed):
    torch = _torch()
    num_splits, m, n, k = shape
    gen = torch.Generator(device="cuda").manual_seed(seed)
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16, generator=gen)
    b = torch.randn(n, k, device="cuda", dtype=torch.float32, generator=gen)
    return HcPrenormCase(m, n, k, num_splits, a, b)


def call_hc_prenorm(lib, case, layout, out):
    lib.tf32_hc_prenorm_gemm(case.a, case.b, out[0], out[1], num_splits=case.num_splits or None)


EINSUM_HEADS = ((128, 512, 128), (8, 4096, 1024))  # DeepGEMM's (h, r, d)
EINSUM_BATCHES = (128, 4096)                        # of its b in (4, 32, 128, 4096, 8192)
EINSUM_SUM_SHAPES = tuple((s, m, n, k) for s in (129, 4096) for m, n, k in ((128, 384, 128), (256, 256, 256)))


# ---- grouped cases (reference §7.3: DeepGEMM's generators, quantised by hopgemm) ------------------------------------


def _scale_layouts(layouts, sf):
    """{layout: sf as passed}: "mn" MN-major TMA-aligned (hopgemm.get_mn_major_tma_aligned_tensor, 2-D or 3-D), "row"
    row-major as the quantiser returns it."""
    import hopgemm

    return {layout: hopgemm.get_mn_major_tma_aligned_tensor(sf) if layout == "mn" else sf for layout in layouts}


@dataclass
class MGroupedCase:
    """An M-grouped GEMM row: A [rows, k] (masked: [G, max_m, k]) per 1x128, B [G, n, k] per 128x128, BF16 D; `layout`
    (hopgemm.testing.MGroupedLayout) says which rows each group computes, `grouped` is the op's layout argument (the
    ids, the psum ends or masked_m)."""

    kind: str  # "contiguous", "contiguous-psum" or "masked"
    num_groups: int
    m: int  # expected rows per group
    n: int
    k: int
    layout: object
    grouped: object
    a8: object
    sfa_row: object
    b8: object
    sfb: object
    operands: dict
    expected_m: int = 0  # masked: the hint passed (DeepGEMM HEAD's int(expected * 1.2))
    right_expected_m: int = 0  # masked-4x: the hint that matches the real rows

    @property
    def flops(self):
        return 2.0 * self.layout.valid_rows * self.n * self.k

    @property
    def b_bytes(self):
        """B and its scales, read once."""
        return self.b8.numel() + self.sfb.numel() * 4

    @property
    def bytes(self):
        """Valid rows of A (with their scales) read and of D written once, B read once (DeepGEMM's count_bytes)."""
        rows = self.layout.valid_rows
        return rows * (self.k + _ceil_div(self.k, 128) * 4 + self.n * 2) + self.b_bytes

    def new_output(self):
        torch = _torch()
        shape = (self.num_groups, self.a8.shape[1], self.n) if self.kind == "masked" else (self.a8.shape[0], self.n)
        return torch.full(shape, float("nan"), device="cuda", dtype=torch.bfloat16)

    def checked(self, d):
        """The computed rows of an output, segment after segment (the rows reference() returns)."""
        torch = _torch()
        flat = d.view(-1, self.n)
        return torch.cat([flat[start:end] for _, start, end in self.layout.segments])

    def reference(self):
        """FP32 (TF32 off) product of the dequantised inputs, the computed rows only, segment after segment."""
        torch = _torch()
        a8, sfa = self.a8.view(-1, self.k), self.sfa_row.view(-1, self.sfa_row.shape[-1])
        out = []
        for g, start, end in self.layout.segments:
            a = a8[start:end].float() * sfa[start:end].repeat_interleave(128, dim=1)[:, : self.k]
            sfb = self.sfb[g].repeat_interleave(128, dim=0)[: self.n].repeat_interleave(128, dim=1)[:, : self.k]
            out.append(a @ (self.b8[g].float() * sfb).T)
        ref = torch.cat(out)
        torch.cuda.synchronize()
        return ref


def _grouped_b(num_groups, n, k, gen):
    """B [G, n, k] randn, cast per group per 128x128 (DeepGEMM's grouped_cast with block casts)."""
    from hopgemm.utils import per_block_cast_to_fp8

    torch = _torch()
    b8 = torch.empty(num_groups, n, k, device="cuda", dtype=torch.float8_e4m3fn)
    sfb = torch.empty(num_groups, _ceil_div(n, 128), _ceil_div(k, 128), device="cuda", dtype=torch.float32)
    for g in range(num_groups):
        b8[g], sfb[g] = per_block_cast_to_fp8(torch.randn(n, k, device="cuda", dtype=torch.bfloat16, generator=gen))
    return b8, sfb


def make_contiguous_case(shape, layouts, seed, psum):
    """DeepGEMM's generate_m_grouped_contiguous: group g has int(m * U(0.7, 1.3)) rows, padded to 128 (-1 ids, or psum
    ends); A randn with its padding rows zeroed."""
    import random

    from hopgemm.testing import m_grouped_ids_layout, m_grouped_psum_layout
    from hopgemm.utils import per_token_cast_to_fp8

    torch = _torch()
    num_groups, m, n, k = shape
    rng = random.Random(seed)
    sizes = [int(m * rng.uniform(0.7, 1.3)) for _ in range(num_groups)]
    layout = m_grouped_psum_layout(sizes) if psum else m_grouped_ids_layout(sizes)
    gen = torch.Generator(device="cuda").manual_seed(seed)
    a = torch.randn(layout.num_rows, k, device="cuda", dtype=torch.bfloat16, generator=gen)
    valid = torch.zeros(layout.num_rows, device="cuda", dtype=torch.bool)
    for _, start, end in layout.segments:
        valid[start:end] = True
    a[~valid] = 0
    a8, sfa = per_token_cast_to_fp8(a)
    del a
    b8, sfb = _grouped_b(num_groups, n, k, gen)
    operands = {layout_name: ((a8, sf), (b8, sfb)) for layout_name, sf in _scale_layouts(layouts, sfa).items()}
    torch.cuda.synchronize()
    return MGroupedCase("contiguous-psum" if psum else "contiguous", num_groups, m, n, k, layout, layout.tensor(), a8,
                        sfa, b8, sfb, operands)


def make_masked_case(shape, layouts, seed, real_factor=1):
    """DeepGEMM's generate_m_grouped_masked: A randn [G, MASKED_MAX_M, k], masked_m[g] = int(m * U(0.7, 1.3)) (times
    real_factor for masked-4x, capped at MASKED_MAX_M), SFA rows past masked_m zeroed; the hint passed is
    int(m * 1.2) as DeepGEMM HEAD's test passes it (and int(real_factor * m * 1.2) as the right one)."""
    import random

    from hopgemm.testing import m_grouped_masked_layout
    from hopgemm.utils import per_token_cast_to_fp8

    torch = _torch()
    num_groups, m, n, k = shape
    rng = random.Random(seed)
    masked_m = [min(MASKED_MAX_M, int(real_factor * m * rng.uniform(0.7, 1.3))) for _ in range(num_groups)]
    layout = m_grouped_masked_layout(masked_m, MASKED_MAX_M)
    gen = torch.Generator(device="cuda").manual_seed(seed)
    a = torch.randn(num_groups * MASKED_MAX_M, k, device="cuda", dtype=torch.bfloat16, generator=gen)
    a8, sfa = per_token_cast_to_fp8(a)
    del a
    a8, sfa = a8.view(num_groups, MASKED_MAX_M, k), sfa.view(num_groups, MASKED_MAX_M, -1)
    for g, rows in enumerate(masked_m):
        sfa[g, rows:] = 0
    b8, sfb = _grouped_b(num_groups, n, k, gen)
    operands = {layout_name: ((a8, sf), (b8, sfb)) for layout_name, sf in _scale_layouts(layouts, sfa).items()}
    torch.cuda.synchronize()
    return MGroupedCase("masked", num_groups, m, n, k, layout, layout.tensor(), a8, sfa, b8, sfb, operands,
                        expected_m=int(m * 1.2), right_expected_m=int(real_factor * m * 1.2))


def call_contiguous(lib, case, layout, d):
    """The same deep_gemm call for both libraries; grouped_layout (HEAD) / m_indices (SEED) passed by position."""
    a, b = case.operands[layout]
    if case.kind == "contiguous-psum":
        lib.m_grouped_fp8_gemm_nt_contiguous(a, b, d, case.grouped, use_psum_layout=True)
    else:
        lib.m_grouped_fp8_gemm_nt_contiguous(a, b, d, case.grouped)


def call_masked(lib, case, layout, d):
    a, b = case.operands[layout]
    lib.m_grouped_fp8_gemm_nt_masked(a, b, d, case.grouped, case.expected_m)


def call_masked_right_hint(lib, case, layout, d):
    """masked-4x's variant: the same call given the expected_m that matches the real rows."""
    a, b = case.operands[layout]
    lib.m_grouped_fp8_gemm_nt_masked(a, b, d, case.grouped, case.right_expected_m)


@dataclass
class KGroupedCase:
    """A k-grouped weight-gradient row: d[g] [m, n] FP32 = C[g] + A_g B_g^T with C aliasing d, A_g / B_g K-major
    [m, ks[g]] / [n, ks[g]] in flat FP8 buffers, per-channel scales [mn, sum(ks) / 128]."""

    num_groups: int
    m: int
    n: int
    k: int  # expected k per group
    ks: list
    ks_tensor: object
    a8: object
    sfa_t: object  # [sum(ks) / 128, m]
    b8: object
    sfb_t: object
    c0: object
    operands: dict

    @property
    def flops(self):
        return 2.0 * self.m * self.n * sum(self.ks)

    @property
    def bytes(self):
        """A, B and their scales read once; D read (C) and written once."""
        return self.a8.numel() + self.b8.numel() + (self.sfa_t.numel() + self.sfb_t.numel()) * 4 + self.c0.numel() * 8

    def checked(self, d):
        return d

    def new_output(self):
        return self.c0.clone()

    def reference(self):
        torch = _torch()
        ref = self.c0.clone()
        off = 0
        for g, k in enumerate(self.ks):
            blocks = slice(off // 128, (off + k) // 128)
            a = self.a8[off * self.m:(off + k) * self.m].view(self.m, k).float()
            b = self.b8[off * self.n:(off + k) * self.n].view(self.n, k).float()
            a *= self.sfa_t[blocks].T.repeat_interleave(128, dim=1)
            b *= self.sfb_t[blocks].T.repeat_interleave(128, dim=1)
            ref[g] += a @ b.T
            off += k
        torch.cuda.synchronize()
        return ref


def make_k_grouped_case(shape, layouts, seed):
    """DeepGEMM's generate_k_grouped_contiguous for SM90 (K-major): ks[g] = align(max(1, int(k * U(0.7, 1.3))), 128),
    A [sum_k, m] and B [sum_k, n] randn cast per group per channel, each group's block transposed into the flat buffer;
    C = randn * 32 (D aliases it). Scale layouts: "mn" = sf.T as DeepGEMM's tests pass it, "row" = row-major."""
    import random

    from hopgemm.utils import per_channel_cast_to_fp8

    torch = _torch()
    num_groups, m, n, k = shape
    rng = random.Random(seed)
    ks = [_ceil_div(max(1, int(k * rng.uniform(0.7, 1.3))), 128) * 128 for _ in range(num_groups)]
    gen = torch.Generator(device="cuda").manual_seed(seed)
    flats = []
    for mn in (m, n):
        flat = torch.empty(sum(ks) * mn, device="cuda", dtype=torch.float8_e4m3fn)
        sf_t = torch.empty(sum(ks) // 128, mn, device="cuda", dtype=torch.float32)
        off = 0
        for kg in ks:
            x8, sf = per_channel_cast_to_fp8(torch.randn(kg, mn, device="cuda", dtype=torch.bfloat16, generator=gen))
            flat[off * mn:(off + kg) * mn] = x8.T.contiguous().view(-1)
            sf_t[off // 128:(off + kg) // 128] = sf
            off += kg
        flats += [flat, sf_t]
    a8, sfa_t, b8, sfb_t = flats
    c0 = torch.randn(num_groups, m, n, device="cuda", generator=gen) * 32
    operands = {layout: ((a8, sfa_t.T if layout == "mn" else sfa_t.T.contiguous()),
                         (b8, sfb_t.T if layout == "mn" else sfb_t.T.contiguous())) for layout in layouts}
    torch.cuda.synchronize()
    return KGroupedCase(num_groups, m, n, k, ks, torch.tensor(ks, device="cuda", dtype=torch.int32), a8, sfa_t, b8,
                        sfb_t, c0, operands)


def call_k_grouped(lib, case, layout, d):
    """(a, b, d, ks, ks_tensor, c) by position: deep_gemm HEAD names them ks_cpu / grouped_layout, SEED ks / ks_tensor;
    C = D (SEED needed it, HEAD requires a C). DeepGEMM takes row-major scales and transposes them inside the call."""
    a, b = case.operands[layout]
    lib.k_grouped_fp8_gemm_nt_contiguous(a, b, d, case.ks, case.ks_tensor, d)


def call_k_grouped_hopgemm(lib, case, layout, d):
    """call_k_grouped; hopgemm takes the k-grouped scales MN-major only, so with row-major ones the call includes the
    get_mn_major_tma_aligned_tensor a user would make (the same transpose DeepGEMM makes inside its call)."""
    if layout == "row":
        (a8, sfa), (b8, sfb) = case.operands[layout]
        lib.k_grouped_fp8_gemm_nt_contiguous((a8, lib.get_mn_major_tma_aligned_tensor(sfa)),
                                             (b8, lib.get_mn_major_tma_aligned_tensor(sfb)), d, case.ks, case.ks_tensor,
                                             d)
    else:
        call_k_grouped(lib, case, layout, d)


# ---- the sets ------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BenchSet:
    name: str
    shapes: tuple                # rows: (m, n, k), grouped (G, m, n, k)
    make_case: Callable          # (shape, layouts, seed) -> case with .flops, .bytes, .new_output(), .reference()
                                 # and .checked(d) (the elements of an output that reference() holds)
    call_hopgemm: Callable       # (hopgemm module, case, layout, d) -> None
    call_deepgemm: Callable      # (deep_gemm module, case, layout, d) -> None
    variants: tuple = ()         # (name, call): further calls of each library timed in the same loop

    def call(self, library):
        return self.call_hopgemm if library == "hopgemm" else self.call_deepgemm


def _make_1d2d(shape, layouts, seed):
    return make_dense_case(shape, layouts, seed, accumulate=False)


def _make_1d1d(shape, layouts, seed):
    return make_dense_case(shape, layouts, seed, accumulate=True)


def _make_contiguous(shape, layouts, seed):
    return make_contiguous_case(shape, layouts, seed, psum=False)


def _make_contiguous_psum(shape, layouts, seed):
    return make_contiguous_case(shape, layouts, seed, psum=True)


def _make_masked(shape, layouts, seed):
    return make_masked_case(shape, layouts, seed)


def _make_masked_4x(shape, layouts, seed):
    return make_masked_case(shape, layouts, seed, real_factor=4)


SETS = {
    s.name: s
    for s in (
        BenchSet("fwd", tuple((m, n, k) for m in FORWARD_M for n, k in DEEPSEEK_V3_NK) + ((8192, 8192, 8192),),
                 _make_1d2d, call_dense, call_dense),
        BenchSet("dgrad", tuple((BACKWARD_M, k, n) for n, k in DEEPSEEK_V3_NK), _make_1d2d, call_dense, call_dense),
        BenchSet("wgrad", tuple((n, k, BACKWARD_M) for n, k in DEEPSEEK_V3_NK), _make_1d1d, call_dense, call_dense),
        BenchSet("contiguous", tuple((g, m, n, k) for g, m in CONTIGUOUS_GROUPS for n, k in GROUPED_NK),
                 _make_contiguous, call_contiguous, call_contiguous),
        BenchSet("contiguous-psum", tuple((g, m, n, k) for g, m in CONTIGUOUS_GROUPS for n, k in GROUPED_NK),
                 _make_contiguous_psum, call_contiguous, call_contiguous),
        BenchSet("masked", tuple((g, m, n, k) for g, m in MASKED_GROUPS for n, k in GROUPED_NK),
                 _make_masked, call_masked, call_masked),
        BenchSet("masked-4x", tuple((g, m, n, k) for g, m in MASKED_4X_GROUPS for n, k in MASKED_4X_NK),
                 _make_masked_4x, call_masked, call_masked, variants=(("right_expected_m", call_masked_right_hint),)),
        BenchSet("kgrouped", K_GROUPED_CASES, make_k_grouped_case, call_k_grouped_hopgemm, call_k_grouped),
        BenchSet("skip-head-mid", SKIP_HEAD_MID_SHAPES, _make_skip_head_mid, call_skip_head_mid, call_skip_head_mid),
        BenchSet("einsum-bhr", tuple((h, b, d, r) for h, r, d in EINSUM_HEADS for b in EINSUM_BATCHES),
                 functools.partial(_make_einsum, "bhr,hdr->bhd"), call_einsum, call_einsum),
        BenchSet("einsum-bhd", tuple((h, b, r, d) for h, r, d in EINSUM_HEADS for b in EINSUM_BATCHES),
                 functools.partial(_make_einsum, "bhd,hdr->bhr"), call_einsum, call_einsum),
        BenchSet("hc-prenorm", tuple((splits, m, 24, k) for splits in (0, 16) for m in (4096, 8192)
                                     for k in (7168, 28672)),
                 make_hc_prenorm_case, call_hc_prenorm, call_hc_prenorm),
        BenchSet("fp8-einsum", tuple((8, b, 1024, 4096) for b in EINSUM_BATCHES), make_fp8_einsum_case,
                 call_fp8_einsum, call_fp8_einsum),
        BenchSet("einsum-bmk", EINSUM_SUM_SHAPES, functools.partial(_make_einsum, "bmk,bnk->mn"), call_einsum,
                 call_einsum),
    )
}
# --suites: named groups of sets.
SUITES = {"dense": ("fwd", "dgrad", "wgrad"), "contiguous": ("contiguous", "contiguous-psum"),
          "masked": ("masked", "masked-4x"), "kgrouped": ("kgrouped",)}


# ---- arguments -----------------------------------------------------------------------------------------------------


def parse_shape(text):
    """MxNxK, or GxMxNxK for a grouped row, positive integers."""
    parts = text.lower().split("x")
    if len(parts) not in (3, 4) or not all(p.isdigit() and int(p) > 0 for p in parts):
        raise argparse.ArgumentTypeError(f"'{text}' is not MxNxK (or GxMxNxK) with positive integers")
    return tuple(int(p) for p in parts)


def parse_dense_shape(text):
    shape = parse_shape(text)
    if len(shape) != 3:
        raise argparse.ArgumentTypeError(f"'{text}' is not MxNxK")
    return shape


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--suites", default="", help="comma-separated, of: " + ", ".join(
        f"{name} ({'+'.join(sets)})" for name, sets in SUITES.items()) + ", or all (default: dense, unless --sets)")
    p.add_argument("--sets", default="", help="comma-separated, of: " + ", ".join(SETS) + " (added to --suites')")
    p.add_argument("--sfa", default="mn", help="scale layouts to time: mn, row or mn,row (see above)")
    p.add_argument("--shapes", default="", help="only these rows: [SET:]MxNxK or [SET:]GxMxNxK,... (default: every "
                   "row of the selected sets)")
    p.add_argument("--rounds", type=int, default=6, help="rounds per row, the libraries' order alternating (6)")
    p.add_argument("--iters", type=int, default=10, help="timed calls per library per round (10)")
    p.add_argument("--jobs", type=int, default=min(12, os.cpu_count() or 4),
                   help="warm-up worker processes (default min(12, cores)); 0: no warm-up pass")
    p.add_argument("--warm-timeout", type=float, default=240.0, help="seconds the warm-up pass may take (240)")
    p.add_argument("--first-call-shape", type=parse_dense_shape, default=(4096, 7168, 2048),
                   help="fwd shape whose first call is timed on fresh caches (4096x7168x2048); "
                        "M, N, K multiples of 128")
    p.add_argument("--host-shape", type=parse_dense_shape, default=(128, 576, 512),
                   help="fwd shape of the host-time-per-call measurement (128x576x512)")
    p.add_argument("--no-kernel-sums", action="store_true",
                   help="skip the torch-profiler kernel sums (a cross-check of the event times)")
    p.add_argument("--skip-first-call", action="store_true")
    p.add_argument("--skip-host", action="store_true")
    p.add_argument("--out", default="", help="JSON file, or a directory for the default name "
                   "(default: bench/results/<gpu>-<date>-vs-deepgemm-<commit>.json)")
    p.add_argument("--table", default="", help="also write the printed table and summary to this file")
    p.add_argument("--plot", nargs="?", const="auto", default="",
                   help="also plot the ratios per row (matplotlib) to this PNG (no value: next to the JSON)")
    # Internal: the warm-up workers and the first-call processes.
    p.add_argument("--warm-worker", default="", help=argparse.SUPPRESS)
    p.add_argument("--first-call-worker", default="", choices=("",) + LIBRARIES, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    suites = [s for s in args.suites.split(",") if s] or ([] if args.sets else ["dense"])
    if "all" in suites:
        suites = list(SUITES)
    for s in suites:
        if s not in SUITES:
            p.error(f"--suites: unknown suite '{s}' (known: {', '.join(SUITES)}, all)")
    wanted = {x for suite in suites for x in SUITES[suite]} | {x for x in args.sets.split(",") if x}
    for s in wanted:
        if s not in SETS:
            p.error(f"--sets: unknown set '{s}' (known: {', '.join(SETS)})")
    args.sets = [s for s in SETS if s in wanted]
    args.layouts = [s for s in args.sfa.split(",") if s]
    if not args.layouts or any(s not in ("mn", "row") for s in args.layouts):
        p.error(f"--sfa must be mn, row or mn,row, got '{args.sfa}'")
    args.only = set()
    for item in (s for s in args.shapes.split(",") if s):
        set_name, _, dims = item.rpartition(":")
        if set_name and set_name not in SETS:
            p.error(f"--shapes: unknown set in '{item}'")
        args.only.add((set_name, parse_shape(dims)))
    if args.rounds < 1 or args.iters < 1:
        p.error("--rounds and --iters must be >= 1")
    if any(x % 128 for x in args.first_call_shape):
        p.error("--first-call-shape: M, N and K must be multiples of 128 (its inputs are quantised by plain torch)")
    return args


def selected_rows(args):
    """(set, shape) of every row to time, in order."""
    rows = []
    for set_name in args.sets:
        for shape in SETS[set_name].shapes:
            if not args.only or (set_name, shape) in args.only or ("", shape) in args.only:
                rows.append((set_name, shape))
    return rows


def warm_tasks(args):
    """Rows the warm-up workers call (each with every layout), plus the host-time shape."""
    tasks = selected_rows(args)
    if not args.skip_host and ("fwd", args.host_shape) not in tasks:
        tasks.append(("fwd", args.host_shape))
    return tasks


def load_libraries():
    """{library: module}; both are needed (DeepGEMM: PYTHONPATH from .anchor/build_deepgemm.sh)."""
    import importlib

    mods = {}
    for lib in LIBRARIES:
        try:
            mods[lib] = importlib.import_module(MODULE_NAMES[lib])
        except Exception as e:  # noqa: BLE001 (reported, then fatal)
            sys.exit(f"vs_deepgemm: cannot import {MODULE_NAMES[lib]} ({type(e).__name__}: {e}); for DeepGEMM: "
                     "source .anchor/build_deepgemm.sh .anchor/deepgemm-54e2261.tgz first")
    return mods


def seed_of(set_name, shape):
    *groups, m, n, k = shape
    seed = sum(ord(c) for c in set_name) * 1000003 + m * 7919 + n * 131 + k
    return (seed + sum(g * 104729 for g in groups)) % (2**31)


def shape_text(shape):
    return "x".join(str(x) for x in shape)


# ---- warm-up: workers, each a slice of the rows ---------------------------------------------------------------------


def run_warm_worker(args):
    """Worker body: every library, every layout, once per task of this worker's slice; one line per call."""
    torch = _torch()
    index, count = (int(x) for x in args.warm_worker.split("/"))
    mods = load_libraries()
    for set_name, shape in warm_tasks(args)[index::count]:
        bench_set = SETS[set_name]
        try:
            case = bench_set.make_case(shape, args.layouts, seed_of(set_name, shape))
        except Exception as e:  # noqa: BLE001 (one failing row must not stop the others)
            print(f"warm FAIL inputs {set_name} {shape_text(shape)}: {type(e).__name__}: {e}", flush=True)
            continue
        calls = [(lib, set_name, bench_set.call(lib)) for lib in LIBRARIES]
        calls += [(lib, f"{set_name}:{variant}", call) for variant, call in bench_set.variants for lib in LIBRARIES]
        for layout in args.layouts:
            for lib, what, call in calls:
                start = time.perf_counter()
                try:
                    call(mods[lib], case, layout, case.new_output())
                    torch.cuda.synchronize()
                    print(f"warm ok {lib} {what} {shape_text(shape)} {layout} {time.perf_counter() - start:.2f} s",
                          flush=True)
                except Exception as e:  # noqa: BLE001
                    print(f"warm FAIL {lib} {what} {shape_text(shape)} {layout}: {type(e).__name__}: "
                          f"{str(e).splitlines()[0] if str(e) else ''}", flush=True)
        del case
        torch.cuda.empty_cache()


def warm_up(args, argv):
    """Runs the workers; returns {(lib, set, shape, layout): error} for the calls that failed."""
    tasks = warm_tasks(args)
    count = max(1, min(args.jobs, len(tasks)))
    if any(s not in SUITES["dense"] for s in args.sets) and count > GROUPED_WARM_JOBS:
        # A masked row's inputs and output take ~6 GB at once: a dozen workers could fill an 80 GB GPU.
        print(f"warm-up: {count} workers capped at {GROUPED_WARM_JOBS} for the grouped sets' memory", flush=True)
        count = GROUPED_WARM_JOBS
    print(f"warm-up: {len(tasks)} rows x {len(args.layouts)} layout(s) x 2 libraries on {count} worker processes",
          flush=True)
    start = time.perf_counter()
    logdir = tempfile.mkdtemp(prefix="vs-deepgemm-warm-")
    procs = []
    for i in range(count):
        log = open(os.path.join(logdir, f"worker{i}.log"), "w")
        # Output to files, not pipes: a worker whose compiler prints a lot must never block on a full pipe.
        procs.append((subprocess.Popen([sys.executable, os.path.abspath(__file__), *argv, "--warm-worker",
                                        f"{i}/{count}"], stdout=log, stderr=subprocess.STDOUT), log))
    deadline = time.monotonic() + args.warm_timeout
    failures = {}
    for i, (proc, log) in enumerate(procs):
        try:
            proc.wait(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()  # our own child, by its pid
            proc.wait()
            print(f"warm-up worker {i} killed after --warm-timeout {args.warm_timeout:.0f} s", flush=True)
        log.close()
        with open(log.name) as f:
            lines = f.read().splitlines()
        ok = sum(1 for line in lines if line.startswith("warm ok"))
        bad = [line for line in lines if line.startswith("warm FAIL")]
        for line in bad:
            print("  " + line)
            words = line.split()
            if len(words) >= 6 and words[2] in LIBRARIES:
                failures[(words[2], words[3], words[4], words[5].rstrip(":"))] = line
        if proc.returncode != 0:
            print(f"  worker {i} exited with {proc.returncode} after {ok} calls; its last lines:")
            for line in lines[-8:]:
                print("    " + line)
    shutil.rmtree(logdir, ignore_errors=True)
    print(f"warm-up: {time.perf_counter() - start:.1f} s, {len(failures)} failed call(s)", flush=True)
    return failures


# ---- first call on fresh caches, each library in its own process -----------------------------------------------------


def torch_quantise(x, block_rows):
    """Plain-torch FP8 cast (no library kernel, so nothing of either library is compiled before the timed call):
    one FP32 scale per block_rows x 128 block; dims multiples of 128 (and of block_rows)."""
    torch = _torch()
    rows, cols = x.shape
    v = x.float().view(rows // block_rows, block_rows, cols // 128, 128)
    sf = v.abs().amax(dim=(1, 3)).clamp(min=1e-4) / 448.0
    q = (v / sf[:, None, :, None]).to(torch.float8_e4m3fn).view(rows, cols)
    return q, sf


def run_first_call_worker(args):
    torch = _torch()
    import importlib

    m, n, k = args.first_call_shape
    a8, sfa = torch_quantise(torch.randn(m, k, device="cuda", dtype=torch.bfloat16), 1)
    b8, sfb = torch_quantise(torch.randn(n, k, device="cuda", dtype=torch.bfloat16), 128)
    sfa_mn = torch.empty_strided((m, k // 128), (1, _ceil_div(m, 4) * 4), device="cuda", dtype=torch.float32)
    sfa_mn.copy_(sfa)
    d = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    torch.cuda.synchronize()
    start = time.perf_counter()
    lib = importlib.import_module(MODULE_NAMES[args.first_call_worker])
    import_s = time.perf_counter() - start
    times = []
    for _ in range(2):
        start = time.perf_counter()
        lib.fp8_gemm_nt((a8, sfa_mn), (b8, sfb), d)
        torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
    print("FIRSTCALL " + json.dumps({"import_s": import_s, "first_call_s": times[0], "second_call_s": times[1]}))


def first_call_times(args, argv):
    """{library: {...}}: each library's first call of --first-call-shape in a fresh process on fresh caches."""
    out = {"shape": shape_text(args.first_call_shape), "sfa": "mn"}
    for lib in LIBRARIES:
        caches = [tempfile.mkdtemp(prefix=f"vs-deepgemm-fresh-{lib}-") for _ in range(2)]
        env = dict(os.environ, HOPGEMM_CACHE_DIR=caches[0], DG_JIT_CACHE_DIR=caches[1])
        try:
            proc = subprocess.run([sys.executable, os.path.abspath(__file__), *argv, "--first-call-worker", lib],
                                  env=env, capture_output=True, text=True, timeout=180)
            lines = [x for x in proc.stdout.splitlines() if x.startswith("FIRSTCALL ")]
            if lines:
                out[lib] = json.loads(lines[-1][len("FIRSTCALL "):])
            else:
                out[lib] = {"error": " | ".join((proc.stderr or proc.stdout).strip().splitlines()[-3:]) or "no output"}
        except subprocess.TimeoutExpired:
            out[lib] = {"error": "timed out after 180 s"}
        finally:
            for c in caches:
                shutil.rmtree(c, ignore_errors=True)
    return out


# ---- timing --------------------------------------------------------------------------------------------------------


def time_libraries(fns, rounds, iters, flush):
    """Times each zero-argument call of `fns` {library: fn} with CUDA events, the L2 flushed (FLUSH_BYTES written)
    before every call, the libraries interleaved call by call, their order swapped every round.

    CUDA events as the primary figure rather than the torch profiler's kernel sums: an event pair brackets
    everything one call puts on the GPU (DeepGEMM's scale transpose for row-major scales, a split-K reduction, the
    gaps between such kernels and the ~1-2 us the GPU takes to start the first one), which is what a model running
    without CUDA graphs pays, and needs no attribution of kernels to libraries; the flush before each call keeps the
    GPU busy while the host enqueues the call, so host time is not counted (it is measured separately).
    and `hopgemm bench` time the same way. The launch latency is the same for both libraries, so on the ~10 us
    decode shapes it pulls the ratio toward 1 a little: KernelSums gives the kernel-only ratio beside it."""
    torch = _torch()
    names = list(fns)
    samples = {n: [] for n in names}
    round_medians = {n: [] for n in names}
    calls = 0
    for r in range(rounds):
        order = names if r % 2 == 0 else names[::-1]
        events = {n: [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
                      for _ in range(iters)] for n in names}
        for i in range(iters):
            for n in order:
                calls += 1
                flush.fill_(1 + calls % 2)  # a new value each time: no write can be a no-op
                start, stop = events[n][i]
                start.record()
                fns[n]()
                stop.record()
        torch.cuda.synchronize()
        for n in names:
            us = [start.elapsed_time(stop) * 1e3 for start, stop in events[n]]
            samples[n] += us
            round_medians[n].append(statistics.median(us))
    return {n: {"median_us": statistics.median(samples[n]), "best_us": min(round_medians[n]),
                "min_us": min(samples[n]), "samples": len(samples[n])} for n in names}


class KernelSums:
    """A cross-check of the event times: the sum of the GPU kernels one call runs (torch profiler, CUDA activity),
    the method of the 2026-11-25 head-to-head and of DeepGEMM's own bench_kineto. Per library, its own profiler
    session of `iters` calls, each after the same L2 flush; the flush's kernels (learnt once by profiling the flush
    alone) are left out, everything else in the session is the library's. Excludes the launch latency and any gap
    between a call's kernels, which the events include. Turned off for the rest of the run after its first error."""

    def __init__(self, flush):
        self.flush, self.flush_names, self.error, self.rows = flush, None, None, 0

    def _profile(self, fn, iters):
        torch = _torch()
        from torch.profiler import ProfilerActivity, profile

        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for i in range(iters):
                self.flush.fill_(1 + i % 2)
                fn()
            torch.cuda.synchronize()
        totals = {}
        for event in prof.key_averages():
            device_us = getattr(event, "device_time_total", None)
            if device_us is None:
                device_us = getattr(event, "cuda_time_total", 0.0)
            if device_us:
                totals[event.key] = totals.get(event.key, 0.0) + device_us
        return totals

    def measure(self, fns, iters):
        """{library: mean kernel microseconds per call}, or {} once disabled. The libraries' order alternates
        from one measured row to the next."""
        if self.error:
            return {}
        reverse = self.rows % 2 == 1
        self.rows += 1
        try:
            if self.flush_names is None:
                self.flush_names = set(self._profile(lambda: None, 2))
                if not self.flush_names:
                    raise RuntimeError("the profiler saw no kernel of the L2 flush")
            out = {}
            for lib in (list(fns)[::-1] if reverse else list(fns)):
                totals = self._profile(fns[lib], iters)
                kept = {k: v for k, v in totals.items() if k not in self.flush_names}
                if not kept:
                    raise RuntimeError(f"the profiler saw no kernel of {lib}")
                out[lib] = sum(kept.values()) / iters
            return out
        except Exception as e:  # noqa: BLE001 (a cross-check: the event times stand without it)
            self.error = f"{type(e).__name__}: {e}"
            print(f"kernel sums off from here on: {self.error}", flush=True)
            return {}


def host_times(mods, args, layouts):
    """Python host time of one call per library and layout: `calls` back-to-back calls with no synchronisation,
    best and median of `batches` batches (libraries alternating), the garbage collector off (as timeit)."""
    torch = _torch()
    calls, batches = 500, 10
    bench_set = SETS["fwd"]
    case = bench_set.make_case(args.host_shape, layouts, seed_of("host", args.host_shape))
    out = {"shape": shape_text(args.host_shape), "calls_per_batch": calls, "batches": batches}
    for layout in layouts:
        fns = {}
        for lib in LIBRARIES:
            fn = functools.partial(bench_set.call(lib), mods[lib], case, layout, case.new_output())
            try:
                for _ in range(3):
                    fn()
                torch.cuda.synchronize()
                fns[lib] = fn
            except Exception as e:  # noqa: BLE001
                out.setdefault(layout, {})[lib] = {"error": f"{type(e).__name__}: {e}"}
        per_batch = {lib: [] for lib in fns}
        gc_was_enabled = gc.isenabled()
        gc.disable()
        try:
            for b in range(batches):
                for lib in (list(fns) if b % 2 == 0 else list(fns)[::-1]):
                    torch.cuda.synchronize()
                    start = time.perf_counter()
                    for _ in range(calls):
                        fns[lib]()
                    per_batch[lib].append((time.perf_counter() - start) / calls * 1e6)
        finally:
            if gc_was_enabled:
                gc.enable()
        torch.cuda.synchronize()
        for lib, values in per_batch.items():
            out.setdefault(layout, {})[lib] = {"best_us": min(values), "median_us": statistics.median(values)}
    return out


# ---- report --------------------------------------------------------------------------------------------------------


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def fmt(value, spec, missing="n/a"):
    """format(value, spec), or `missing` right-aligned to the spec's width."""
    return format(missing, ">" + spec.split(".")[0]) if value is None else format(value, spec)


def header_info(torch, mods, argv):
    props = torch.cuda.get_device_properties(0)
    info = {
        "gpu": props.name,
        "compute_capability": f"{props.major}.{props.minor}",
        "sm_count": props.multi_processor_count,
        "l2_bytes": getattr(props, "L2_cache_size", None),
        "torch_version": torch.__version__,
        "torch_cuda_version": torch.version.cuda,
        "hopgemm_version": getattr(mods["hopgemm"], "__version__", "unknown"),
        "deep_gemm_version": getattr(mods["deepgemm"], "__version__", "unknown"),
        "hopgemm_pdl": bool(mods["hopgemm"].get_pdl()),
        "commit": os.environ.get("HOPGEMM_COMMIT") or git_commit(),
        "command_line": " ".join(["python", "bench/vs_deepgemm.py", *argv]),
        "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "hopgemm_cache_dir": os.environ.get("HOPGEMM_CACHE_DIR"),
        "deepgemm_cache_dir": os.environ.get("DG_JIT_CACHE_DIR"),
    }
    try:
        smi = subprocess.run(["nvidia-smi", "--query-gpu=driver_version,clocks.sm,clocks.max.sm,power.limit",
                              "--format=csv,noheader", "-i", "0"], capture_output=True, text=True, timeout=20)
        fields = [x.strip() for x in smi.stdout.strip().split(",")]
        if len(fields) == 4:
            info.update(driver=fields[0], sm_clock_at_start=fields[1], max_sm_clock=fields[2], power_limit=fields[3])
    except (OSError, subprocess.SubprocessError):
        pass
    return info


def git_commit():
    try:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        out = subprocess.run(["git", "-C", root, "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                             timeout=10)
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def default_out_name(gpu, date, commit):
    """bench/results naming: <gpu>-<date>-vs-deepgemm-<commit>.json, the GPU slugged as `hopgemm bench` does."""
    slug = "".join(c.lower() if c.isalnum() else "-" for c in gpu)
    slug = "-".join(w for w in slug.split("-") if w)
    slug = slug[len("nvidia-"):] if slug.startswith("nvidia-") else slug
    return f"{slug}-{date}-vs-deepgemm-{commit}.json"


def summarise(rows, layouts, sets):
    """Geomean / min / max of DeepGEMM time / hopgemm time per (set, layout), per suite of more than one selected set
    (named [suite]), and over all sets, per layout."""
    groups = [(name, [name]) for name in sets]
    groups += [(f"[{name}]", [x for x in members if x in sets]) for name, members in SUITES.items()
               if sum(1 for x in members if x in sets) > 1]
    groups.append(("all", list(sets)))
    out = []
    for layout in layouts:
        for group, members in groups:
            picked = [r for r in rows if r["sfa"] == layout and r["set"] in members and r.get("ratio") is not None]
            if not picked:
                continue
            low = min(picked, key=lambda r: r["ratio"])
            high = max(picked, key=lambda r: r["ratio"])
            kernels = [r["ratio_kernels"] for r in picked if r.get("ratio_kernels") is not None]
            out.append({"set": group, "sfa": layout, "rows": len(picked),
                        "geomean_ratio": geomean([r["ratio"] for r in picked]),
                        "geomean_ratio_best": geomean([r["ratio_best"] for r in picked]),
                        "geomean_ratio_kernels": geomean(kernels) if len(kernels) == len(picked) else None,
                        "min_ratio": low["ratio"], "min_row": f'{low["set"]} {low["shape"]}',
                        "max_ratio": high["ratio"], "max_row": f'{high["set"]} {high["shape"]}',
                        "hopgemm_faster_rows": sum(1 for r in picked if r["ratio"] > 1.0)})
    return out


class Report:
    """Collects rows, prints them, and rewrites the JSON after each row (a crash leaves what was measured)."""

    def __init__(self, path, table_path, header, method):
        self.path, self.table_path = path, table_path
        self.doc = {"schema": "hopgemm-vs-deepgemm/1", "header": header, "method": method, "rows": [],
                    "summary": [], "first_call": None, "host_us_per_call": None}
        self.lines = []

    def say(self, line=""):
        print(line, flush=True)
        self.lines.append(line)

    def save(self):
        os.makedirs(os.path.dirname(os.path.abspath(self.path)), exist_ok=True)
        tmp = self.path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.doc, f, indent=1)
            f.write("\n")
        os.replace(tmp, self.path)
        if self.table_path:
            with open(self.table_path, "w") as f:
                f.write("\n".join(self.lines) + "\n")


ROW_HEADER = (f"{'set':15} {'sfa':3} {'G':>3} {'M':>5} {'N':>5} {'K':>5} | {'hopgemm us':>10} {'TFLOPS':>6} | "
              f"{'DeepGEMM us':>11} {'TFLOPS':>6} | {'DG/hop':>6} {'best':>6} {'kernel':>6} | "
              f"{'diff hop':>8} {'diff DG':>8} {'hop-DG':>8} | note")


def format_row(r):
    """One table line; M is the expected rows per group of an M-grouped row, K the expected K of a k-grouped one."""
    *groups, m, n, k = (int(x) for x in r["shape"].split("x"))
    h, d = r.get("hopgemm") or {}, r.get("deepgemm") or {}
    return (f"{r['set']:15} {r['sfa']:3} {groups[0] if groups else '':>3} {m:5} {n:5} {k:5} | "
            f"{fmt(h.get('median_us'), '10.1f')} "
            f"{fmt(h.get('tflops'), '6.0f')} | {fmt(d.get('median_us'), '11.1f')} {fmt(d.get('tflops'), '6.0f')} | "
            f"{fmt(r.get('ratio'), '6.3f')} {fmt(r.get('ratio_best'), '6.3f')} {fmt(r.get('ratio_kernels'), '6.3f')} | "
            f"{fmt(r.get('diff_hopgemm_ref'), '8.1e')} {fmt(r.get('diff_deepgemm_ref'), '8.1e')} "
            f"{fmt(r.get('diff_hopgemm_deepgemm'), '8.1e')} | {r.get('note', '')}")


def measure_row(torch, mods, bench_set, case, ref, layout, args, flush, kernel_sums, row):
    """Checks and times one (row, layout) into `row`; a set's variants (further calls of each library) are checked and
    timed in the same interleaved loop, into row["variants"]."""
    from hopgemm.testing import calc_diff

    outputs, notes = {}, []
    calls = [(lib, lib, bench_set.call(lib)) for lib in LIBRARIES]
    calls += [(f"{lib}:{name}", lib, call) for name, call in bench_set.variants for lib in LIBRARIES]
    for key, lib, call in calls:
        try:
            d = case.new_output()
            call(mods[lib], case, layout, d)
            torch.cuda.synchronize()
            outputs[key] = d
        except Exception as e:  # noqa: BLE001 (the row is reported with the error; the run goes on)
            notes.append(f"{key} failed: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
    diffs = {f"diff_{key}_ref": float(calc_diff(case.checked(d), ref)) for key, d in outputs.items()}
    if "hopgemm" in outputs and "deepgemm" in outputs:
        diffs["diff_hopgemm_deepgemm"] = float(calc_diff(case.checked(outputs["hopgemm"]),
                                                         case.checked(outputs["deepgemm"])))
    for key, value in diffs.items():
        if key.endswith("_ref") and not value < BAD_DIFF:  # also catches NaN (non-finite output)
            notes.append(f"WRONG {key[len('diff_'):-len('_ref')]} (diff {value:.1e}, limit {BAD_DIFF:g})")
        row[key] = value if math.isfinite(value) else None  # JSON has no NaN
    # The timed calls reuse the checked outputs (an accumulating case keeps adding into its D).
    fns = {key: functools.partial(call, mods[lib], case, layout, outputs[key])
           for key, lib, call in calls if key in outputs}
    for fn in fns.values():
        fn()
        fn()
    torch.cuda.synchronize()
    if fns:
        timing = time_libraries(fns, args.rounds, args.iters, flush)
        for key, t in timing.items():
            t["tflops"] = case.flops / (t["median_us"] * 1e-6) / 1e12
            t["gbps"] = case.bytes / (t["median_us"] * 1e-6) / 1e9
            if hasattr(case, "b_bytes"):
                t["b_read_gbps"] = case.b_bytes / (t["median_us"] * 1e-6) / 1e9
            lib, _, variant = key.partition(":")
            if variant:
                if lib in timing:
                    t["main_over_variant"] = timing[lib]["median_us"] / t["median_us"]
                row.setdefault("variants", {}).setdefault(variant, {})[lib] = t
            else:
                row[lib] = t
        if "hopgemm" in timing and "deepgemm" in timing:
            row["ratio"] = timing["deepgemm"]["median_us"] / timing["hopgemm"]["median_us"]
            row["ratio_best"] = timing["deepgemm"]["best_us"] / timing["hopgemm"]["best_us"]
        main_fns = {lib: fn for lib, fn in fns.items() if lib in LIBRARIES}
        if kernel_sums is not None and main_fns:
            sums = kernel_sums.measure(main_fns, args.iters)
            for lib, us in sums.items():
                row[lib]["kernel_us"] = us
            if len(sums) == 2:
                row["ratio_kernels"] = sums["deepgemm"] / sums["hopgemm"]
    for variant, per_lib in row.get("variants", {}).items():
        notes.append(f"{variant}: " + ", ".join(
            f"{lib} {t['median_us']:.1f} us (row's call / this {fmt(t.get('main_over_variant'), '.2f')})"
            for lib, t in per_lib.items()))
    row["note"] = "; ".join(notes)


def copy_bandwidth(torch, nbytes=1 << 30, iters=20):
    """The device's copy bandwidth in this run: a torch copy of nbytes, CUDA events, median of iters; GB/s counts
    the bytes read plus the bytes written (2 * nbytes per copy)."""
    import statistics as stats

    src = torch.empty(nbytes, dtype=torch.uint8, device="cuda").fill_(1)
    dst = torch.empty_like(src)
    dst.copy_(src)
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(iters)]
    for start, stop in events:
        start.record()
        dst.copy_(src)
        stop.record()
    torch.cuda.synchronize()
    us = stats.median(start.elapsed_time(stop) * 1e3 for start, stop in events)
    del src, dst
    torch.cuda.empty_cache()
    return {"bytes": nbytes, "median_us": us, "gbps_read_plus_write": 2 * nbytes / (us * 1e-6) / 1e9}


def plot_ratios(rows, path):
    """One bar per (row, scale layout): DeepGEMM time / hopgemm time, grouped by set, a line at 1."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    picked = [r for r in rows if r.get("ratio") is not None]
    if not picked:
        return False
    fig, ax = plt.subplots(figsize=(max(8, 0.28 * len(picked)), 5))
    sets = list(dict.fromkeys(r["set"] for r in picked))
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, r in enumerate(picked):
        ax.bar(i, r["ratio"], color=colours[sets.index(r["set"]) % len(colours)])
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks(range(len(picked)))
    ax.set_xticklabels([f"{r['set']} {r['shape']} {r['sfa']}" for r in picked], rotation=90, fontsize=6)
    ax.set_ylabel("DeepGEMM time / hopgemm time")
    ax.set_title("> 1: hopgemm faster", fontsize=8)
    ax.legend(handles=[plt.Rectangle((0, 0), 1, 1, color=colours[i % len(colours)]) for i in range(len(sets))],
              labels=sets, fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)
    return True


def main(argv):
    args = parse_args(argv)
    if args.first_call_worker:
        return run_first_call_worker(args)
    # hopgemm honours DG_JIT_CACHE_DIR as an alias of its own variable: give it its own directory.
    os.environ.setdefault("HOPGEMM_CACHE_DIR", "/tmp/hopgemm-cache")
    if args.warm_worker:
        return run_warm_worker(args)

    import importlib.util

    for lib in LIBRARIES:  # fail before minutes of warm-up, not after
        if importlib.util.find_spec(MODULE_NAMES[lib]) is None:
            sys.exit(f"vs_deepgemm: no module {MODULE_NAMES[lib]}; for DeepGEMM: source .anchor/build_deepgemm.sh "
                     ".anchor/deepgemm-54e2261.tgz first (it sets PYTHONPATH)")
    # The child processes re-derive the rows from the same options.
    warm_failures = warm_up(args, argv) if args.jobs > 0 else {}
    first_call = None if args.skip_first_call else first_call_times(args, argv)

    torch = _torch()
    torch.set_float32_matmul_precision("highest")  # the FP32 reference without TF32
    mods = load_libraries()
    header = header_info(torch, mods, argv)
    out = args.out or os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bench", "results")
    if os.path.isdir(out) or out.endswith("/"):
        out = os.path.join(out, default_out_name(header["gpu"], header["date_utc"][:10], header["commit"]))
    method = {"timing": "CUDA events around each call, L2 flushed by a 256 MiB write before each call (outside the "
                        "events), libraries interleaved call by call, order swapped each round",
              "rounds": args.rounds, "iters_per_round": args.iters, "flush_bytes": FLUSH_BYTES,
              "ratio": "DeepGEMM median / hopgemm median over all samples (> 1: hopgemm faster); ratio_best: "
                       "the same over each library's best per-round median",
              "kernel_us": "cross-check: sum of the call's GPU kernels (torch profiler), one session of iters calls "
                           "per library after the event rounds; ratio_kernels = DeepGEMM / hopgemm of those",
              "reference": "FP32 product (TF32 off) of the dequantised FP8 inputs (+ C); calc_diff as deep_gemm's, "
                           "over the rows a grouped GEMM computes",
              "flops": "2 * M * N * K over valid rows (M-grouped: the groups' real rows; k-grouped: sum(ks))",
              "gbps": "bytes / median time: A (valid rows) and B read once, D written once (k-grouped: D read as C "
                      "too); b_read_gbps: B and its scales only",
              "cublaslt_baseline": "not run: hopgemm's cuBLASLt blockwise baseline (src/bench/cublaslt_baselines.*) "
                                   "is reachable from the C++ `hopgemm bench` only, not from Python"}
    report = Report(out, args.table, header, method)
    report.doc["first_call"] = first_call
    report.doc["warm_up_failures"] = sorted(warm_failures.values())
    report.say(f"# {header['gpu']} ({header['sm_count']} SMs), driver {header.get('driver', '?')}, torch "
               f"{header['torch_version']}, hopgemm {header['hopgemm_version']} at {header['commit']}, deep_gemm "
               f"{header['deep_gemm_version']}, {header['date_utc']}")
    report.say(f"# {method['timing']}; {args.rounds} rounds x {args.iters} calls per library per row; ratio = "
               "DeepGEMM / hopgemm time (median; best = best round; kernel = torch-profiler kernel sums)")
    report.say(ROW_HEADER)

    if any(s.startswith("masked") for s in args.sets):
        report.doc["copy_bandwidth"] = copy_bandwidth(torch)
    flush = torch.empty(FLUSH_BYTES // 4, dtype=torch.int32, device="cuda")
    kernel_sums = None if args.no_kernel_sums else KernelSums(flush)
    for set_name, shape in selected_rows(args):
        bench_set = SETS[set_name]
        *groups, m, n, k = shape
        base = dict({"set": set_name, "shape": shape_text(shape)}, **({"g": groups[0]} if groups else {}), m=m, n=n,
                    k=k)
        try:
            case = bench_set.make_case(shape, args.layouts, seed_of(set_name, shape))
            ref = case.reference()
        except Exception as e:  # noqa: BLE001
            for layout in args.layouts:
                row = dict(base, sfa=layout, note=f"inputs failed: {type(e).__name__}: {e}")
                report.doc["rows"].append(row)
                report.say(format_row(row))
            report.save()
            continue
        for layout in args.layouts:
            row = dict(base, sfa=layout, flops=case.flops)
            try:
                measure_row(torch, mods, bench_set, case, ref, layout, args, flush, kernel_sums, row)
            except Exception as e:  # noqa: BLE001
                row["note"] = (row.get("note", "") + f" measurement failed: {type(e).__name__}: {e}").strip()
            report.doc["rows"].append(row)
            report.say(format_row(row))
            report.save()
        del case, ref
        torch.cuda.empty_cache()
    if kernel_sums is not None and kernel_sums.error:
        report.doc["kernel_sums_error"] = kernel_sums.error
    del flush, kernel_sums
    torch.cuda.empty_cache()

    if not args.skip_host:
        try:
            report.doc["host_us_per_call"] = host_times(mods, args, args.layouts)
        except Exception as e:  # noqa: BLE001
            report.doc["host_us_per_call"] = {"error": f"{type(e).__name__}: {e}"}
    report.doc["summary"] = summarise(report.doc["rows"], args.layouts, args.sets)

    report.say()
    report.say(f"== vs DeepGEMM summary ({header['gpu']}, hopgemm {header['commit']}, {header['date_utc']}) ==")
    report.say("ratio = DeepGEMM time / hopgemm time (> 1: hopgemm faster); event medians unless named")
    for s in report.doc["summary"]:
        kernels = fmt(s["geomean_ratio_kernels"], ".3f")
        report.say(f"{s['set']:15} sfa={s['sfa']:3} {s['rows']:2} rows: geomean {s['geomean_ratio']:.3f}x "
                   f"(best-round {s['geomean_ratio_best']:.3f}x, kernel sums {kernels}x), "
                   f"min {s['min_ratio']:.3f}x ({s['min_row']}), max {s['max_ratio']:.3f}x ({s['max_row']}), "
                   f"hopgemm faster on {s['hopgemm_faster_rows']}")
    bad = [r for r in report.doc["rows"] if r.get("note")]
    for r in bad:
        report.say(f"note: {r['set']} {r['shape']} sfa={r['sfa']}: {r['note']}")
    copy = report.doc.get("copy_bandwidth")
    if copy:
        report.say(f"device copy (torch, {copy['bytes'] >> 20} MiB): {copy['gbps_read_plus_write']:.0f} GB/s read + "
                   f"written; B read by the masked rows with expected m = {B_READ_ROWS_M} (B and its scales / time):")
        for r in report.doc["rows"]:
            if r["set"] == "masked" and r["m"] == B_READ_ROWS_M:
                parts = [f"{lib} {r[lib]['b_read_gbps']:.0f} GB/s "
                         f"({100 * r[lib]['b_read_gbps'] / copy['gbps_read_plus_write']:.0f}% of copy)"
                         for lib in LIBRARIES if r.get(lib, {}).get("b_read_gbps")]
                report.say(f"  {r['shape']} sfa={r['sfa']}: " + (", ".join(parts) or "n/a"))
    if first_call:
        parts = []
        for lib in LIBRARIES:
            v = first_call.get(lib, {})
            parts.append(f"{lib} {v['first_call_s']:.2f} s (then {v['second_call_s'] * 1e3:.2f} ms)"
                         if "first_call_s" in v else f"{lib} error: {v.get('error')}")
        report.say(f"first call, fresh cache, {first_call['shape']} (compile + load): " + ", ".join(parts))
    host = report.doc["host_us_per_call"]
    if host and "error" not in host:
        for layout in args.layouts:
            parts = [f"{lib} {v['best_us']:.1f} us (median {v['median_us']:.1f})" if "best_us" in v
                     else f"{lib} error: {v.get('error')}" for lib, v in host.get(layout, {}).items()]
            report.say(f"Python host time per call, {host['shape']}, sfa={layout}: " + ", ".join(parts))
    elif host:
        report.say(f"Python host time per call: {host['error']}")
    if args.plot:
        plot = os.path.splitext(out)[0] + ".png" if args.plot == "auto" else args.plot
        try:
            report.say(f"plot: {plot}" if plot_ratios(report.doc["rows"], plot) else "plot: no row with a ratio")
        except Exception as e:  # noqa: BLE001 (matplotlib missing, say)
            report.say(f"plot failed: {type(e).__name__}: {e}")
    report.say(f"results: {out}")
    report.save()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
