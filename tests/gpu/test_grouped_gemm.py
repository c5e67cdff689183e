"""MoE grouped FP8 GEMMs on the GPU (m_grouped_fp8_gemm_{nt,nn}_contiguous in its group-ids, psum and packed layouts,
m_grouped_fp8_gemm_nt_masked, k_grouped_fp8_gemm_nt_contiguous) against a float64 reference of the dequantised inputs.

The semantics checked are include/hopgemm/grouped_gemm.hpp's: every row a group computes is held to its own element-wise
bound (hopgemm.testing.assert_m_grouped_fp8_gemm_close / assert_k_grouped_fp8_gemm_close) and calc_diff over all of them
to the dense tests' bar; every row the op must not write (skipped -1 blocks, psum gaps, masked rows past masked_m, guard
rows around d) still holds the NaN d was poisoned with. The rows of a partially valid block of the group-ids layout that
hold -1 are not checked (they receive A_pad @ B[g]^T). Also: CUDA-graph replays with the device-side layouts changed in
place, bitwise reruns, bad inputs rejected before any launch (d untouched), and bad device-side values (ids outside
[0, G), masked_m above M_max) handled without a fault. Skips (with the reason) where torch or an SM90 GPU is missing,
and test by test where this build of hopgemm lacks the op.

Run: pytest tests/gpu/test_grouped_gemm.py [-k "not slow"]   (the 2^31-element k-grouped case is named *_slow)
"""
import random
import re

import pytest

from sm90_torch import require_torch_on_sm90

torch = require_torch_on_sm90("CUDA tensors")

import hopgemm  # noqa: E402
from grouped_inputs import (  # noqa: E402
    CONTIGUOUS,
    CONTIGUOUS_NN,
    K_GROUPED,
    MASKED,
    bitwise_equal,
    check_k_grouped,
    check_m_grouped,
    grouped_op,
    k_grouped_operands,
    k_grouped_sf,
    layout_kwargs,
    m_grouped_operands,
    masked_operands,
    nan_tensor,
    run_contiguous,
    run_k_grouped,
    run_masked,
)
from hopgemm.testing import (  # noqa: E402
    m_grouped_ids_layout,
    m_grouped_masked_layout,
    m_grouped_packed_layout,
    m_grouped_psum_layout,
)

# Whole 128-row blocks of -1 at the start, in the middle and at the end; groups of 0, 1, 127 and 129 rows, each padded
# with -1 to the alignment: 7 blocks of 128 rows (an odd count), group boundaries inside and between tile pairs.
SIZES_RUNS = [(-1, 128), 0, 1, (-1, 128), 127, 129, (-1, 128)]
PSUM_SIZES = [1, 127, 0, 129, 300, 0, 64, 5]
PACKED_SIZES = [1, 1, 200, 3, 0, 129, 64, 1, 500, 0]  # tiny groups, groups straddling 64- and 128-row tiles


@pytest.fixture
def restore_alignment():
    yield
    setter = getattr(hopgemm, "set_mk_alignment_for_contiguous_layout", None)
    if setter is not None:
        setter(128)


# ---- m-grouped contiguous, group-ids layout --------------------------------------------------------------------------


@pytest.mark.parametrize("k", [7168, 2048, 512])
@pytest.mark.parametrize("n", [4096, 7168, 2112])
def test_contiguous_ids_group_sizes_and_skipped_blocks(n, k):
    run_contiguous(m_grouped_ids_layout(SIZES_RUNS), n, k, seed=n + k)


@pytest.mark.parametrize("num_groups", [1, 2, 7, 64, 256])
def test_contiguous_ids_group_counts(num_groups):
    rng = random.Random(num_groups)
    sizes = [0 if rng.random() < 0.15 else rng.randint(1, 200) for _ in range(num_groups)]
    sizes[rng.randrange(num_groups)] = rng.randint(1, 200)
    run_contiguous(m_grouped_ids_layout(sizes), 576, 640, seed=num_groups)


def test_contiguous_ids_all_padding_writes_zeros():
    run_contiguous(m_grouped_ids_layout([(-1, 384)], num_groups=4), 4096, 2048, seed=3)


def test_contiguous_ids_out_of_range_ids_zero_their_block():
    # Device-side values no host check can see: whole blocks holding G, a large id and a negative id other than -1 are
    # padding blocks like -1 blocks (no fault, rows zeroed), and the stream is still usable afterwards.
    layout = m_grouped_ids_layout([5, (3, 128), 130, (1000, 128), (-7, 128), 1], num_groups=3)
    run_contiguous(layout, 2112, 2048, seed=4)
    torch.cuda.synchronize()
    run_contiguous(m_grouped_ids_layout([3, 200]), 2112, 2048, seed=5)


def test_contiguous_keywords_aliases_and_scale_layouts_agree():
    # grouped_layout= and m_indices= (deep_gemm HEAD's and SEED's name), the fp8_fp4 alias, an explicit recipe, sfa
    # MN-major TMA-aligned and sfb MN-major per group: all the same bits as the positional call with row-major scales.
    layout = m_grouped_ids_layout(SIZES_RUNS)
    d, (a8, sfa, b8, sfb) = run_contiguous(layout, 2112, 7168, seed=6)
    ids = layout.tensor()
    sfa_mn = hopgemm.get_mn_major_tma_aligned_tensor(sfa)
    sfb_mn = hopgemm.get_mn_major_tma_aligned_tensor(sfb)
    assert sfb_mn.stride(1) == 1
    op = grouped_op(CONTIGUOUS)
    calls = {
        "grouped_layout=": lambda out: op((a8, sfa), (b8, sfb), out, grouped_layout=ids),
        "m_indices=": lambda out: op((a8, sfa), (b8, sfb), out, m_indices=ids),
        "recipe=(1, 128, 128)": lambda out: op((a8, sfa), (b8, sfb), out, ids, recipe=(1, 128, 128)),
        "sfa MN-major": lambda out: op((a8, sfa_mn), (b8, sfb), out, ids),
        "sfb MN-major": lambda out: op((a8, sfa), (b8, sfb_mn), out, ids),
        "m_grouped_fp8_fp4_gemm_nt_contiguous": lambda out: grouped_op("m_grouped_fp8_fp4_gemm_nt_contiguous")(
            (a8, sfa_mn), (b8, sfb), out, ids),
    }
    for name, call in calls.items():
        out = nan_tensor(*d.shape)
        call(out)
        assert bitwise_equal(out, d), name


@pytest.mark.parametrize("kind", ["ids", "psum", "packed"])
def test_contiguous_nn_matches_nt(kind):
    # nn takes B as [G, K, N]: the transposed view of the K-major [G, N, K] buffer, its scales likewise transposed.
    layout = {"ids": m_grouped_ids_layout(SIZES_RUNS), "psum": m_grouped_psum_layout(PSUM_SIZES),
              "packed": m_grouped_packed_layout(PACKED_SIZES)}[kind]
    d, (a8, sfa, b8, sfb) = run_contiguous(layout, 4096, 2048, seed=7)
    out = nan_tensor(*d.shape)
    grouped_op(CONTIGUOUS_NN)((a8, sfa), (b8.transpose(1, 2), sfb.transpose(1, 2)), out, layout.tensor(),
                              **layout_kwargs(layout))
    assert bitwise_equal(out, d)


def test_contiguous_zero_rows_is_a_no_op():
    op = grouped_op(CONTIGUOUS)
    a8, sfa, b8, sfb = m_grouped_operands(128, 256, 512, 2, seed=8)
    buf = nan_tensor(128, 256)
    op((a8[:0], sfa[:0]), (b8, sfb), buf[:0], torch.empty(0, device="cuda", dtype=torch.int32))
    torch.cuda.synchronize()
    assert buf.isnan().all()


@pytest.mark.parametrize("alignment", [64, 256])
def test_contiguous_alignment_setting(alignment, restore_alignment):
    setter = grouped_op("set_mk_alignment_for_contiguous_layout")
    setter(alignment)
    assert hopgemm.get_mk_alignment_for_contiguous_layout() == alignment
    runs = [1, (-1, alignment), alignment - 1, alignment + 1, 0, 2 * alignment, (-1, alignment)]
    run_contiguous(m_grouped_ids_layout(runs, alignment=alignment), 2112, 2048, seed=alignment)
    run_contiguous(m_grouped_psum_layout([1, 0, alignment + 1, 5, 64], alignment=alignment, trailing_rows=alignment),
                   2112, 2048, seed=alignment + 1)


def test_alignment_rejects_values_that_are_not_positive_multiples_of_64(restore_alignment):
    setter = grouped_op("set_mk_alignment_for_contiguous_layout")
    assert hopgemm.get_mk_alignment_for_contiguous_layout() == 128
    for bad in (0, -64, 32, 96, 100):
        with pytest.raises(ValueError):
            setter(bad)
        assert hopgemm.get_mk_alignment_for_contiguous_layout() == 128


# ---- m-grouped contiguous, psum and packed layouts -------------------------------------------------------------------


@pytest.mark.parametrize("n,k", [(4096, 7168), (2112, 2048), (7168, 512)])
def test_contiguous_psum(n, k):
    # Ragged ends, empty groups; rows between a group's end and the next group's aligned start (and the trailing block)
    # untouched.
    run_contiguous(m_grouped_psum_layout(PSUM_SIZES, trailing_rows=128), n, k, seed=n + k + 1)


@pytest.mark.parametrize("expected_m", [None, 1, 64, 4096])
def test_contiguous_psum_empty_groups_any_expected_m(expected_m):
    layout = m_grouped_psum_layout([0, 0, 200, 0, 1, 0, 383, 0])
    run_contiguous(layout, 4096, 2048, seed=11, expected_m_for_psum_layout=expected_m)


@pytest.mark.parametrize("n,k", [(4096, 7168), (2112, 2048), (7168, 512)])
def test_contiguous_packed(n, k):
    run_contiguous(m_grouped_packed_layout(PACKED_SIZES), n, k, seed=n + k + 2)


@pytest.mark.parametrize("num_groups", [2, 64])
def test_contiguous_packed_tiny_groups(num_groups):
    rng = random.Random(num_groups)
    sizes = [rng.choice([0, 1, 2, rng.randint(3, 40)]) for _ in range(num_groups)]
    sizes[0] = sizes[-1] = 0
    sizes[num_groups // 2] = 1
    run_contiguous(m_grouped_packed_layout(sizes), 576, 1024, seed=num_groups + 12)


@pytest.mark.parametrize("expected_m", [None, 1, 4096])
def test_contiguous_packed_trailing_rows_untouched(expected_m):
    # Rows past the last group's end are nobody's: left untouched.
    run_contiguous(m_grouped_packed_layout([70, 0, 129, 1], trailing_rows=77), 2112, 2048, seed=13,
                   expected_m_for_psum_layout=expected_m)


@pytest.mark.parametrize("kind", ["psum", "packed"])
def test_contiguous_psum_packed_all_groups_empty(kind):
    layout = (m_grouped_psum_layout if kind == "psum" else m_grouped_packed_layout)([0, 0, 0, 0], trailing_rows=256)
    run_contiguous(layout, 4096, 2048, seed=14)


@pytest.mark.parametrize("kind", ["ids", "psum", "packed"])
def test_contiguous_cuda_graph_replay_with_new_layout(kind):
    # The layout lives on the device: a captured call replays right after the layout tensor is changed in place
    # (same number of rows, so the same kernel and tensor maps).
    rows, n, k, num_groups = 1024, 4096, 2048, 4

    def make(sizes):
        if kind == "ids":
            base = m_grouped_ids_layout(sizes, num_groups=num_groups)
            return m_grouped_ids_layout(sizes + [(-1, 128)] * ((rows - base.num_rows) // 128), num_groups=num_groups)
        fn = m_grouped_psum_layout if kind == "psum" else m_grouped_packed_layout
        return fn(sizes, trailing_rows=rows - fn(sizes).num_rows)

    layouts = [make(s) for s in ([100, 0, 300, 5], [0, 129, 1, 250], [0, 0, 0, 0], [384, 0, 0, 255])]
    assert all(layout.num_rows == rows for layout in layouts)
    op = grouped_op(CONTIGUOUS)
    a8, sfa, b8, sfb = m_grouped_operands(rows, n, k, num_groups, seed=15)
    grouped = layouts[0].tensor()
    d = nan_tensor(rows, n)
    kwargs = layout_kwargs(layouts[0])
    op((a8, sfa), (b8, sfb), d, grouped, **kwargs)  # warm-up: compiles and loads outside the capture
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        op((a8, sfa), (b8, sfb), d, grouped, **kwargs)
    for layout in layouts[1:] + layouts[:1]:
        grouped.copy_(layout.tensor())
        d.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        check_m_grouped(d, a8, sfa, b8, sfb, layout)


# ---- m-grouped masked ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n,k", [(4096, 7168), (7168, 2048), (2112, 512)])
def test_masked(n, k):
    # Rows [0, masked_m[g]) written, every other row (those up to the next tile boundary included) untouched.
    run_masked([0, 1, 64, 129, 256, 200], 256, n, k, expected_m=128, seed=n + k + 3)


def test_masked_many_decode_groups():
    rng = random.Random(16)
    masked_m = [rng.randint(0, 40) for _ in range(32)]
    run_masked(masked_m, 128, 4096, 7168, expected_m=20, seed=16)


def test_masked_max_m_not_a_multiple_of_64():
    # A full group of M_max = 200 rows ends inside a tile: its tile's rows past 200 are the next group's first rows.
    run_masked([200, 200, 199, 0, 200], 200, 2112, 2048, expected_m=200, seed=17)


def test_masked_clamps_masked_m_and_never_writes_outside_d():
    # masked_m above M_max (clamped to M_max) or negative (clamped to 0): no write past d, none before it.
    run_masked([193, 10**6, -5, 3, 2**31 - 1], 192, 4096, 2048, expected_m=192, seed=18, guard_rows=64)


@pytest.mark.parametrize("expected_m,real_m", [(32, 512), (512, 32), (4096, 1)])
def test_masked_expected_m_far_from_the_real_m(expected_m, real_m):
    rng = random.Random(expected_m + real_m)
    max_m = 1024
    masked_m = [min(max_m, max(1, int(real_m * rng.uniform(0.7, 1.3)))) for _ in range(4)]
    run_masked(masked_m, max_m, 4096, 7168, expected_m=expected_m, seed=19)


def test_masked_scale_layouts_and_aliases_agree():
    masked_m = [5, 0, 256, 100]
    d, (a8, sfa, b8, sfb) = run_masked(masked_m, 256, 7168, 2048, expected_m=96, seed=20)
    d_mn, _ = run_masked(masked_m, 256, 7168, 2048, expected_m=96, seed=20, sf_mn_major=True)
    assert bitwise_equal(d, d_mn)
    masked = torch.tensor(masked_m, device="cuda", dtype=torch.int32)
    for name in ("fp8_m_grouped_gemm_nt_masked", "m_grouped_fp8_fp4_gemm_nt_masked"):
        out = nan_tensor(*d.shape)
        grouped_op(name)((a8, sfa), (b8, sfb), out, masked, 96)
        assert bitwise_equal(out, d), name


def test_masked_cuda_graph_replay_with_new_masked_m():
    # masked_m is read on the device: capture once, change it in place, replay.
    num_groups, max_m, n, k, expected_m = 4, 384, 4096, 2048, 128
    op = grouped_op(MASKED)
    a8, sfa, b8, sfb = masked_operands(num_groups, max_m, n, k, seed=21)
    masked = torch.tensor([100, 0, 384, 7], device="cuda", dtype=torch.int32)
    d = nan_tensor(num_groups, max_m, n)
    op((a8, sfa), (b8, sfb), d, masked, expected_m)  # warm-up: compiles and loads outside the capture
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        op((a8, sfa), (b8, sfb), d, masked, expected_m)
    for values in ([0, 384, 1, 250], [384, 384, 384, 384], [0, 0, 0, 0], [5, 1000, 64, 129], [100, 0, 384, 7]):
        masked.copy_(torch.tensor(values, dtype=torch.int32))
        d.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        check_m_grouped(d, a8, sfa, b8, sfb, m_grouped_masked_layout(values, max_m))


# ---- k-grouped -------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("c_mode", ["aliased", "distinct", "none"])
def test_k_grouped_c_modes_and_empty_group(c_mode):
    # An empty group (k = 0): d[g] = c[g], or zeros without c.
    run_k_grouped(1000, 2112, [256, 0, 384, 128, 1024], seed=22, c_mode=c_mode)


def test_k_grouped_scales_row_major_refused_tma_aligned_copy_taken():
    # The scales must be MN-major TMA-aligned (include/hopgemm/grouped_gemm.hpp): row-major ones, and sf.T where M is
    # not a multiple of 4, are refused naming the argument; get_mn_major_tma_aligned_tensor of either is taken.
    m, n, ks = 998, 512, [128, 0, 384]
    op = grouped_op(K_GROUPED)
    a, sfa_t, b, sfb_t = k_grouped_operands(m, n, ks, seed=31)
    ks_tensor = torch.tensor(ks, device="cuda", dtype=torch.int32)
    d = nan_tensor(len(ks), m, n, dtype=torch.float32)
    sfb = k_grouped_sf(sfb_t, "mn")
    expect_rejected([
        (["sfa"], lambda: op((a, k_grouped_sf(sfa_t, "row")), (b, sfb), d, ks, ks_tensor)),
        (["sfa"], lambda: op((a, k_grouped_sf(sfa_t, "mn")), (b, sfb), d, ks, ks_tensor)),  # stride 998: not aligned
        (["sfb"], lambda: op((a, k_grouped_sf(sfa_t, "aligned")), (b, k_grouped_sf(sfb_t, "row")), d, ks, ks_tensor)),
    ], d)
    run_k_grouped(m, n, ks, seed=31, c_mode="distinct", sf_layout="aligned")


def test_k_grouped_deep_gemm_head_keywords():
    # deep_gemm HEAD names ks / ks_tensor ks_cpu / grouped_layout: the same call by those keywords, the same bits.
    ks = [256, 0, 128]
    d, (a, sfa, b, sfb, ks_tensor, c) = run_k_grouped(256, 768, ks, seed=32, c_mode="distinct")
    out = nan_tensor(*d.shape, dtype=torch.float32)
    grouped_op(K_GROUPED)((a, sfa), (b, sfb), out, ks_cpu=ks, grouped_layout=ks_tensor, c=c)
    assert bitwise_equal(out, d)


@pytest.mark.parametrize("n", [768, 256])
def test_k_grouped_few_tiles_per_group_with_empty_groups(n):
    # Fewer tiles per group than SMs, so that CTAs skip groups (DeepGEMM #238 crashed here at N = 768 on an H100).
    run_k_grouped(384, n, [128, 0, 256, 0, 0, 512, 128, 0, 384], seed=23 + n)


def test_k_grouped_many_small_groups():
    rng = random.Random(24)
    ks = [rng.choice([0, 128, 256, 384]) for _ in range(40)]
    run_k_grouped(256, 512, ks, seed=24, c_mode="distinct")


EP_CASES = [(4, 4096, 7168, 8192), (4, 7168, 2048, 8192),  # EP64
            (8, 4096, 7168, 4096), (8, 7168, 2048, 4096),  # EP32
            (16, 4096, 7168, 2048), (16, 7168, 2048, 2048)]  # EP16


@pytest.mark.parametrize("m", [1000, 384])
def test_k_grouped_whole_b_tile_pair(m):
    # DeepGEMM's 1D1D 128x152 tile on a B-sharing pair (forced: the heuristics do not rank it yet), whose half of B (76
    # rows) is not whole swizzle atoms: the pair's first CTA loads and multicasts the whole B tile through each group's
    # patched descriptor. M = 1000: 8 m-blocks (the last partial); 384: 3, a phantom partner per group.
    hopgemm._C._set_grouped_config_overrides(dict(block_m=128, block_n=152, cluster_m=2, cluster_n=1,
                                                  promote_overlap=0))
    try:
        run_k_grouped(m, 1000, [256, 0, 384, 1152, 128], seed=25 + m)
    finally:
        hopgemm._C._set_grouped_config_overrides({})


@pytest.mark.parametrize("with_empty_group", [False, True])
@pytest.mark.parametrize("num_groups,m,n,expected_k", EP_CASES)
def test_k_grouped_ep_cases_reduced(num_groups, m, n, expected_k, with_empty_group):
    # DeepGEMM's six k-grouped cases with M, N and the expected K halved: ks = align(max(1, int(expected_k *
    # U(0.7, 1.3))), 128), and the variant with one random group's k set to 0.
    rng = random.Random(num_groups * m + n)
    ks = [-(-max(1, int(expected_k // 2 * rng.uniform(0.7, 1.3))) // 128) * 128 for _ in range(num_groups)]
    if with_empty_group:
        ks[rng.randrange(num_groups)] = 0
    run_k_grouped(m // 2, n // 2, ks, seed=num_groups + m + n)


@pytest.mark.parametrize("m,n", [(7168, 256), (256, 7168)])
def test_k_grouped_64bit_offsets_slow(m, n):
    # sum(ks) * M (or * N) above 2^31 elements (DeepGEMM #226: int32 offsets overflowed): the last groups start past
    # 2^31 in A's (B's) flat buffer. The reference is checked on every 97th row and the last 64 rows of each group.
    ks = [77824, 76800, 78848, 77824]
    assert sum(ks) * max(m, n) > 2**31
    if torch.cuda.mem_get_info()[0] < 24 << 30:
        pytest.skip(f"needs 24 GiB of free GPU memory, {torch.cuda.mem_get_info()[0] / 2**30:.1f} GiB free")
    op = grouped_op(K_GROUPED)
    a, sfa_t, b, sfb_t = k_grouped_operands(m, n, ks, seed=25)
    sfa, sfb = k_grouped_sf(sfa_t, "mn"), k_grouped_sf(sfb_t, "mn")
    c = torch.randn(len(ks), m, n, device="cuda") * 32
    d = c.clone()
    op((a, sfa), (b, sfb), d, ks, torch.tensor(ks, device="cuda", dtype=torch.int32), d)
    for rows in (slice(0, m, 97), slice(m - 64, m)):
        check_k_grouped(d, a, sfa, b, sfb, ks, c=c, rows=rows)


def test_k_grouped_tn_is_unsupported_on_sm90():
    # SM90's FP8 WGMMA reads no MN-major operand: the tn form (A [sum_k, M], B [sum_k, N]) is refused, not run.
    op = grouped_op("k_grouped_fp8_gemm_tn_contiguous")
    m, n, ks = 128, 256, [128, 256]
    a, sfa_t, b, sfb_t = k_grouped_operands(m, n, ks, seed=26)
    d = nan_tensor(2, m, n, dtype=torch.float32)
    ks_tensor = torch.tensor(ks, device="cuda", dtype=torch.int32)
    with pytest.raises(NotImplementedError):
        op((a.view(sum(ks), m), sfa_t), (b.view(sum(ks), n), sfb_t), d, ks, ks_tensor, d)
    torch.cuda.synchronize()
    assert d.isnan().all()


# ---- bitwise reruns --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["ids", "psum", "packed", "masked", "k_grouped"])
def test_bitwise_identical_reruns(kind):
    if kind == "masked":
        d, (a8, sfa, b8, sfb) = run_masked([129, 0, 256, 64, 1], 256, 7168, 7168, expected_m=100, seed=27)
        masked = torch.tensor([129, 0, 256, 64, 1], device="cuda", dtype=torch.int32)
        rerun = nan_tensor(*d.shape)
        grouped_op(MASKED)((a8, sfa), (b8, sfb), rerun, masked, 100)
    elif kind == "k_grouped":
        d, (a, sfa, b, sfb, ks_tensor, c) = run_k_grouped(1024, 2048, [1024, 0, 2048, 512], seed=27, c_mode="distinct")
        rerun = nan_tensor(*d.shape, dtype=torch.float32)
        grouped_op(K_GROUPED)((a, sfa), (b, sfb), rerun, [1024, 0, 2048, 512], ks_tensor, c=c)
    else:
        layout = {"ids": m_grouped_ids_layout(SIZES_RUNS + [1000, 300]), "psum": m_grouped_psum_layout(PSUM_SIZES),
                  "packed": m_grouped_packed_layout(PACKED_SIZES)}[kind]
        d, (a8, sfa, b8, sfb) = run_contiguous(layout, 7168, 7168, seed=27)
        rerun = nan_tensor(*d.shape)
        grouped_op(CONTIGUOUS)((a8, sfa), (b8, sfb), rerun, layout.tensor(), **layout_kwargs(layout))
    assert bitwise_equal(rerun, d)


# ---- bad inputs: rejected before any launch, d untouched -------------------------------------------------------------


def names_argument(message, name):
    """Whether an error message names the argument: as 'name', or, for a name no English word could be (longer than
    two letters), as a word of its own (deep_gemm-style messages such as "use_psum_layout and use_packed_layout
    exclude each other")."""
    return f"'{name}'" in message or (len(name) > 2 and re.search(rf"\b{re.escape(name)}\b", message) is not None)


def expect_rejected(cases, *outputs):
    """Each call of `cases` [(argument names, call)] raises ValueError, NotImplementedError or TypeError naming one of
    the arguments; afterwards every output is still all NaN (nothing was launched or copied)."""
    for names, call in cases:
        with pytest.raises((ValueError, NotImplementedError, TypeError)) as info:
            call()
        assert any(names_argument(str(info.value), name) for name in names), (names, str(info.value))
    torch.cuda.synchronize()
    for out in outputs:
        assert out.isnan().all(), "a rejected call wrote to its output"


def test_contiguous_bad_inputs():
    op = grouped_op(CONTIGUOUS)
    layout = m_grouped_ids_layout([100, 0, 200])
    rows, n, k, g = layout.num_rows, 256, 512, layout.num_groups
    a8, sfa, b8, sfb = m_grouped_operands(rows, n, k, g, seed=28)
    ids = layout.tensor()
    ends = m_grouped_psum_layout([100, 0, 200]).tensor()
    d = nan_tensor(rows, n)
    tall = nan_tensor(rows + 128, n)
    a, b = (a8, sfa), (b8, sfb)
    expect_rejected([
        (["grouped_layout"], lambda: op(a, b, d, ids.long())),  # dtype
        (["grouped_layout"], lambda: op(a, b, d, ids.cpu())),  # host memory
        (["grouped_layout"], lambda: op(a, b, d, ids[:-128])),  # not one id per row
        (["grouped_layout"], lambda: op(a, b, d, ids[:g + 1], use_psum_layout=True)),  # psum: not one end per group
        (["grouped_layout"], lambda: op(a, b, d, ends[:g - 1], use_packed_layout=True)),  # packed: likewise
        (["m_indices", "grouped_layout"], lambda: op(a, b, d, m_indices=ids.long())),
        (["m_indices", "grouped_layout"], lambda: op(a, b, d, ids, m_indices=ids)),  # both given
        (["use_psum_layout", "use_packed_layout"],
         lambda: op(a, b, d, ends, use_psum_layout=True, use_packed_layout=True)),
        (["a"], lambda: op((a8.to(torch.bfloat16), sfa), b, d, ids)),  # dtype
        (["sfa"], lambda: op((a8, sfa[:, :2]), b, d, ids)),  # scale shape
        (["a", "b"], lambda: op(a, (b8[:, :, :256], sfb), d, ids)),  # K disagrees with a
        (["sfb"], lambda: op(a, (b8, sfb[:g - 1]), d, ids)),  # groups disagree with b
        (["b"], lambda: op(a, (b8.transpose(1, 2).contiguous().transpose(1, 2), sfb), d, ids)),  # MN-major FP8 B
        (["d", "a"], lambda: op(a, b, tall, ids)),  # rows disagree with a
        (["d"], lambda: op(a, b, d.float(), ids)),  # BF16 output only
        (["expected_m_for_psum_layout", "expected_m"],
         lambda: op(a, b, d, ids, expected_m_for_psum_layout=64)),  # a hint of the psum and packed layouts only
        (["expected_m_for_psum_layout", "expected_m"],
         lambda: op(a, b, d, ends, use_psum_layout=True, expected_m_for_psum_layout=0)),
        (["recipe"], lambda: op(a, b, d, ids, recipe=(1, 1, 128))),  # the 1D2D recipe only
    ], d, tall)


def test_masked_bad_inputs():
    op = grouped_op(MASKED)
    g, max_m, n, k = 3, 128, 256, 512
    a8, sfa, b8, sfb = masked_operands(g, max_m, n, k, seed=29)
    masked = torch.tensor([5, 0, 128], device="cuda", dtype=torch.int32)
    d = nan_tensor(g, max_m, n)
    short = nan_tensor(g, max_m - 64, n)
    a, b = (a8, sfa), (b8, sfb)
    expect_rejected([
        (["masked_m"], lambda: op(a, b, d, masked.long(), 64)),  # dtype
        (["masked_m"], lambda: op(a, b, d, masked.cpu(), 64)),  # host memory
        (["masked_m"], lambda: op(a, b, d, torch.tensor([5, 0, 128, 1], device="cuda", dtype=torch.int32), 64)),
        (["masked_m"], lambda: op(a, b, d, masked.view(g, 1), 64)),  # not 1-D
        (["a", "b"], lambda: op((a8[:2], sfa[:2]), b, d, masked, 64)),  # groups disagree
        (["d"], lambda: op(a, b, d[:2], masked, 64)),
        (["d"], lambda: op(a, b, short, masked, 64)),  # M_max disagrees with a
        (["sfa"], lambda: op((a8, sfa[:, :, :1]), b, d, masked, 64)),
        (["sfb"], lambda: op(a, (b8, sfb[:, :1]), d, masked, 64)),
        (["expected_m"], lambda: op(a, b, d, masked, 0)),
    ], d, short)


def test_k_grouped_bad_inputs():
    op = grouped_op(K_GROUPED)
    m, n, ks = 256, 512, [128, 256, 0]
    a, sfa_t, b, sfb_t = k_grouped_operands(m, n, ks, seed=30)
    sa, sb = (a, sfa_t.T), (b, sfb_t.T)
    ks_tensor = torch.tensor(ks, device="cuda", dtype=torch.int32)
    c = torch.randn(3, m, n, device="cuda")
    d = nan_tensor(3, m, n, dtype=torch.float32)
    expect_rejected([
        (["a", "b", "ks", "sfa", "sfb"], lambda: op(sa, sb, d, [128, 256, 128], ks_tensor, c)),  # sum(ks) != buffers
        (["ks"], lambda: op(sa, sb, d, [100, 284, 0], ks_tensor, c)),  # not multiples of 128
        (["ks"], lambda: op(sa, sb, d, [-128, 512, 0], ks_tensor, c)),  # negative
        (["ks", "ks_tensor", "d"], lambda: op(sa, sb, d, [128, 256], ks_tensor[:2], c)),  # not one per group
        (["ks_tensor"], lambda: op(sa, sb, d, ks, ks_tensor.long(), c)),  # dtype
        (["ks_tensor"], lambda: op(sa, sb, d, ks, ks_tensor.cpu(), c)),  # host memory
        (["ks_tensor"], lambda: op(sa, sb, d, ks, ks_tensor[:2], c)),  # not one per group
        (["c"], lambda: op(sa, sb, d, ks, ks_tensor, c[:, :, :256])),  # shape
        (["c"], lambda: op(sa, sb, d, ks, ks_tensor, c.to(torch.bfloat16))),  # dtype
        (["d", "c"], lambda: op(sa, sb, d.to(torch.bfloat16), ks, ks_tensor, c)),  # FP32 output only
        (["sfa"], lambda: op((a, sfa_t.T[:, :2]), sb, d, ks, ks_tensor, c)),  # sum(ks) / 128 scale columns
        (["ks", "ks_cpu"], lambda: op(sa, sb, d, None, ks_tensor, c)),  # the host K list is required
        (["use_psum_layout"], lambda: op(sa, sb, d, ks, ks_tensor, c, use_psum_layout=True)),  # not on SM90
        (["recipe"], lambda: op(sa, sb, d, ks, ks_tensor, c, recipe=(1, 128, 128))),  # the 1D1D recipe only
    ], d)
