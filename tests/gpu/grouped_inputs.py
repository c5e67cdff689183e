"""Inputs, calls and checks shared by the grouped FP8 GEMM GPU tests and their sanitizer subset (imported after their
skip checks): magnitude-varied operands cast by hopgemm's quantisers as DeepGEMM's tests cast them, each op run into a
NaN-poisoned output, and hopgemm.testing's grouped element-wise checks with the calc_diff bars of the dense tests."""
import pytest
import torch

import hopgemm
from fp8_gemm_inputs import TOL_BF16, TOL_FP32
from hopgemm.testing import (
    assert_k_grouped_fp8_gemm_close,
    assert_m_grouped_fp8_gemm_close,
    assert_untouched,
    k_grouped_offsets,
    m_grouped_masked_layout,
    magnitude_varied_randn,
)
from hopgemm.utils import ceil_div, per_block_cast_to_fp8, per_channel_cast_to_fp8, per_token_cast_to_fp8

FP8 = torch.float8_e4m3fn
CONTIGUOUS = "m_grouped_fp8_gemm_nt_contiguous"
CONTIGUOUS_NN = "m_grouped_fp8_gemm_nn_contiguous"
MASKED = "m_grouped_fp8_gemm_nt_masked"
K_GROUPED = "k_grouped_fp8_gemm_nt_contiguous"


def grouped_op(name):
    """hopgemm.<name>; a test of an op this build of hopgemm lacks fails (the grouped ops are part of the API)."""
    fn = getattr(hopgemm, name, None)
    if fn is None:
        pytest.fail(f"hopgemm has no {name} in this build")
    return fn


def nan_tensor(*shape, dtype=torch.bfloat16):
    """An output filled with NaN, so that every element an op fails to write, or writes where it must not, is caught."""
    return torch.full(shape, float("nan"), device="cuda", dtype=dtype)


def bitwise_equal(x, y):
    """The same bits everywhere, NaN included (torch.equal says NaN != NaN)."""
    ints = {torch.bfloat16: torch.int16, torch.float32: torch.int32}
    return x.shape == y.shape and x.dtype == y.dtype and torch.equal(x.view(ints[x.dtype]), y.view(ints[y.dtype]))


def m_grouped_operands(num_rows, n, k, num_groups, seed):
    """(a8 [num_rows, k], sfa [num_rows, ceil(k / 128)] row-major, b8 [G, n, k], sfb [G, ceil(n / 128), ceil(k / 128)]):
    A cast per 1 x 128, each B[g] per 128 x 128 (as DeepGEMM's generate_m_grouped_contiguous casts them), all with
    magnitudes that differ per row of A, per 128-row block of each B[g], per K block and from group to group."""
    gen = torch.Generator(device="cuda").manual_seed(seed)
    a = magnitude_varied_randn(num_rows, k, 1, 128, seed, gen).to(torch.bfloat16)
    a8, sfa = per_token_cast_to_fp8(a)
    del a
    b8 = torch.empty(num_groups, n, k, device="cuda", dtype=FP8)
    sfb = torch.empty(num_groups, ceil_div(n, 128), ceil_div(k, 128), device="cuda", dtype=torch.float32)
    for g in range(num_groups):
        b8[g], sfb[g] = per_block_cast_to_fp8(
            magnitude_varied_randn(n, k, 128, 128, seed + 3 + 5 * g, gen).to(torch.bfloat16))
    return a8, sfa, b8, sfb


def masked_operands(num_groups, max_m, n, k, seed):
    """m_grouped_operands with A [G, max_m, k] and sfa [G, max_m, ceil(k / 128)] (row-major)."""
    a8, sfa, b8, sfb = m_grouped_operands(num_groups * max_m, n, k, num_groups, seed)
    return a8.view(num_groups, max_m, k), sfa.view(num_groups, max_m, -1), b8, sfb


def check_m_grouped(d, a8, sfa, b8, sfb, layout):
    """Every computed row of d within its element-wise bound, every untouched row still NaN
    (hopgemm.testing.assert_m_grouped_fp8_gemm_close), and calc_diff under the BF16 bar over each group's rows and over
    all of them."""
    diff = assert_m_grouped_fp8_gemm_close(d, a8, sfa, b8, sfb, layout, diff_tol=TOL_BF16)
    assert diff < TOL_BF16, f"calc_diff {diff:.3g} over the computed rows"


def k_grouped_operands(m, n, ks, seed):
    """(a, sfa_t, b, sfb_t) built as DeepGEMM's generate_k_grouped_contiguous builds them for SM90: operands [sum_k, mn]
    (magnitudes varied per 128-deep K block and per column) cast group by group with per_channel_cast_to_fp8, each
    group's [k, mn] block stored transposed (K-major [mn, k]) at offset off * mn of a flat FP8 buffer of sum(ks) * mn;
    sfa_t / sfb_t the FP32 scales [sum(ks) / 128, mn] (pass k_grouped_sf(sf_t, layout) to the op)."""
    gen = torch.Generator(device="cuda").manual_seed(seed)
    sum_k = sum(ks)
    out = []
    for i, mn in enumerate((m, n)):
        flat = torch.empty(sum_k * mn, device="cuda", dtype=FP8)
        sf_t = torch.empty(sum_k // 128, mn, device="cuda", dtype=torch.float32)
        for g, (off, k) in enumerate(zip(k_grouped_offsets(ks), ks)):
            if k == 0:
                continue
            x8, sf = per_channel_cast_to_fp8(
                magnitude_varied_randn(k, mn, 128, 1, seed + 7 * g + i, gen).to(torch.bfloat16))
            flat[off * mn:(off + k) * mn] = x8.T.contiguous().view(-1)
            sf_t[off // 128:(off + k) // 128] = sf
            del x8, sf
        out += [flat, sf_t]
    return tuple(out)


def k_grouped_sf(sf_t, layout):
    """The k-grouped scales [mn, sum_k / 128] of sf_t [sum_k / 128, mn]: "mn" = sf_t.T (MN-major, what DeepGEMM's
    tests pass: TMA-aligned where mn % 4 == 0), "aligned" = get_mn_major_tma_aligned_tensor of it (any mn), "row" =
    row-major (which the op refuses)."""
    if layout == "aligned":
        return hopgemm.get_mn_major_tma_aligned_tensor(sf_t.T)
    return sf_t.T if layout == "mn" else sf_t.T.contiguous()


def check_k_grouped(d, a, sfa, b, sfb, ks, c=None, rows=None):
    """hopgemm.testing.assert_k_grouped_fp8_gemm_close, and calc_diff under the FP32 bar over each non-empty group and
    over all of them."""
    diff = assert_k_grouped_fp8_gemm_close(d, a, sfa, b, sfb, ks, c=c, rows=rows, diff_tol=TOL_FP32)
    assert diff < TOL_FP32, f"calc_diff {diff:.3g}"


# ---- one call of each op on fresh operands, checked ----------------------------------------------------------------


def layout_kwargs(layout):
    """The contiguous op's keyword arguments for the layout kind of `layout` (an MGroupedLayout)."""
    return {"ids": {}, "psum": {"use_psum_layout": True}, "packed": {"use_packed_layout": True}}[layout.kind]


def run_contiguous(layout, n, k, seed, sfa_mn_major=False, **kwargs):
    """The contiguous GEMM of `layout` on fresh operands (sfa row-major, or MN-major TMA-aligned) into a NaN-poisoned
    d, checked; returns (d, operands) with sfa's values row-major."""
    op = grouped_op(CONTIGUOUS)
    a8, sfa, b8, sfb = m_grouped_operands(layout.num_rows, n, k, layout.num_groups, seed)
    d = nan_tensor(layout.num_rows, n)
    sfa_arg = hopgemm.get_mn_major_tma_aligned_tensor(sfa) if sfa_mn_major else sfa
    op((a8, sfa_arg), (b8, sfb), d, layout.tensor(), **layout_kwargs(layout), **kwargs)
    # zero_padding_blocks=False: the group-ids layout's whole padding blocks are left untouched instead of zeroed.
    expected = layout if kwargs.get("zero_padding_blocks", True) else layout.padding_untouched()
    check_m_grouped(d, a8, sfa, b8, sfb, expected)
    return d, (a8, sfa, b8, sfb)


def run_masked(masked_m, max_m, n, k, expected_m, seed, guard_rows=0, sf_mn_major=False):
    """The masked GEMM on fresh operands into a NaN-poisoned d [G, max_m, n] (with guard_rows NaN rows before and
    after it in the same buffer, checked untouched), checked; returns (d, operands)."""
    op = grouped_op(MASKED)
    num_groups = len(masked_m)
    a8, sfa, b8, sfb = masked_operands(num_groups, max_m, n, k, seed)
    buf = nan_tensor(num_groups * max_m + 2 * guard_rows, n)
    d = buf[guard_rows:guard_rows + num_groups * max_m].view(num_groups, max_m, n)
    sfa_arg = hopgemm.get_mn_major_tma_aligned_tensor(sfa) if sf_mn_major else sfa
    sfb_arg = hopgemm.get_mn_major_tma_aligned_tensor(sfb) if sf_mn_major else sfb
    op((a8, sfa_arg), (b8, sfb_arg), d, torch.tensor(masked_m, device="cuda", dtype=torch.int32), expected_m)
    assert_untouched(buf, [(0, guard_rows), (buf.shape[0] - guard_rows, buf.shape[0])], name="guard rows around d")
    check_m_grouped(d, a8, sfa, b8, sfb, m_grouped_masked_layout(masked_m, max_m))
    return d, (a8, sfa, b8, sfb)


def run_k_grouped(m, n, ks, seed, c_mode="aliased", sf_layout="mn"):
    """k_grouped_fp8_gemm_nt_contiguous on fresh operands with C random * 32 (DeepGEMM's) given as d itself
    ("aliased"), as a distinct tensor ("distinct", d NaN-poisoned, C checked unmodified) or not at all ("none");
    checked; returns (d, operands)."""
    op = grouped_op(K_GROUPED)
    a, sfa_t, b, sfb_t = k_grouped_operands(m, n, ks, seed)
    sfa, sfb = k_grouped_sf(sfa_t, sf_layout), k_grouped_sf(sfb_t, sf_layout)
    ks_tensor = torch.tensor(ks, device="cuda", dtype=torch.int32)
    gen = torch.Generator(device="cuda").manual_seed(seed + 1)
    c = torch.randn(len(ks), m, n, device="cuda", generator=gen) * 32
    if c_mode == "aliased":
        d = c.clone()
        op((a, sfa), (b, sfb), d, ks, ks_tensor, d)
    elif c_mode == "distinct":
        d = nan_tensor(len(ks), m, n, dtype=torch.float32)
        c_before = c.clone()
        op((a, sfa), (b, sfb), d, ks, ks_tensor, c=c)
        assert torch.equal(c, c_before), "c must not be modified"
    else:
        d = nan_tensor(len(ks), m, n, dtype=torch.float32)
        op((a, sfa), (b, sfb), d, ks, ks_tensor)
    check_k_grouped(d, a, sfa, b, sfb, ks, c=None if c_mode == "none" else c)
    return d, (a, sfa, b, sfb, ks_tensor, c)
