"""FP8 GEMM (fp8_gemm_nt/nn/tn/tt) on the GPU against a float64 reference of the dequantised inputs.

Covers the odd-shape matrix of the issue, both recipes and both C modes, the extra output types, NaN-poisoned
outputs and guard bands, bitwise reruns, NaN/Inf propagation, the layout aliases, CUDA-graph capture, zero-size
problems and bad inputs. Inputs vary in magnitude per row, row block and K block, and every output element is held to
its own error bound (fp8_gemm_inputs.check), so one wrong tile or strip fails. Skips (with the reason) where torch or an
SM90 GPU is missing.
"""
import itertools

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available() or torch.cuda.get_device_capability()[0] != 9:
    pytest.skip("needs an SM90 (Hopper) GPU", allow_module_level=True)

import hopgemm  # noqa: E402
from fp8_gemm_inputs import check, make_inputs, poisoned  # noqa: E402

M_LIST = (1, 7, 33, 65, 129, 255, 4095)
N_LIST = (8, 24, 576, 2112, 7176)
K_LIST = (16, 128, 144, 4096, 7168, 7296)


@pytest.mark.parametrize("m,n,k", list(itertools.product(M_LIST, N_LIST, K_LIST)))
def test_1d2d_odd_shapes(m, n, k):
    a8, sfa, b8, sfb = make_inputs(m, n, k, False, seed=m * 7 + n * 13 + k)
    d = poisoned(m, n, torch.bfloat16)
    hopgemm.fp8_gemm_nt((a8, sfa), (b8, sfb), d)
    check(d, a8, sfa, b8, sfb, False)


@pytest.mark.parametrize("m,n,k", [(1, 8, 16), (65, 576, 144), (129, 2112, 7296), (4095, 7176, 4096), (255, 24, 128)])
@pytest.mark.parametrize("c_mode", ["none", "aliased", "distinct"])
def test_1d1d_fp32_accumulate(m, n, k, c_mode):
    a8, sfa, b8, sfb = make_inputs(m, n, k, True, seed=m + n + k)
    c = torch.randn(m, n, device="cuda", dtype=torch.float32) * 32
    if c_mode == "aliased":
        d = c.clone()
        expected_c = c
        hopgemm.fp8_gemm_nt((a8, sfa), (b8, sfb), d, c=d, recipe=(1, 1, 128))
    elif c_mode == "distinct":
        d = poisoned(m, n, torch.float32)
        expected_c = c
        c_before = c.clone()
        hopgemm.fp8_gemm_nt((a8, sfa), (b8, sfb), d, c=c, recipe=(1, 1, 128))
        assert torch.equal(c, c_before), "c must not be modified"
    else:
        d = poisoned(m, n, torch.float32)
        expected_c = None
        hopgemm.fp8_gemm_nt((a8, sfa), (b8, sfb), d, recipe=(1, 1, 128))
    check(d, a8, sfa, b8, sfb, True, expected_c)


@pytest.mark.parametrize("recipe_1d1d,out_dtype", [(True, torch.bfloat16), (False, torch.float32)])
def test_extra_output_types(recipe_1d1d, out_dtype):
    m, n, k = 257, 2112, 7168
    a8, sfa, b8, sfb = make_inputs(m, n, k, recipe_1d1d, seed=5)
    d = poisoned(m, n, out_dtype)
    hopgemm.fp8_gemm_nt((a8, sfa), (b8, sfb), d, recipe=(1, 1, 128) if recipe_1d1d else (1, 128, 128))
    check(d, a8, sfa, b8, sfb, recipe_1d1d)


def test_mn_major_sfa_matches_row_major():
    m, n, k = 300, 2112, 7168
    a8, sfa, b8, sfb = make_inputs(m, n, k, False, seed=9)
    d_row = poisoned(m, n, torch.bfloat16)
    d_mn = poisoned(m, n, torch.bfloat16)
    hopgemm.fp8_gemm_nt((a8, sfa), (b8, sfb), d_row)
    hopgemm.fp8_gemm_nt((a8, hopgemm.get_mn_major_tma_aligned_tensor(sfa)), (b8, sfb), d_mn)
    check(d_row, a8, sfa, b8, sfb, False)
    assert torch.equal(d_row, d_mn)


@pytest.mark.parametrize("m,n,k", [(300, 2112, 7168), (1, 120, 144), (129, 7176, 7296)])
def test_mn_major_sfb_1d2d_matches_row_major(m, n, k):
    # DeepGEMM HEAD accepts the 128x128 block scales MN-major too; the kernel reads either layout directly.
    a8, sfa, b8, sfb = make_inputs(m, n, k, False, seed=10 + m)
    sfb_mn = hopgemm.get_mn_major_tma_aligned_tensor(sfb)
    assert sfb_mn.stride(0) == 1 and torch.equal(sfb_mn, sfb)
    d_row = poisoned(m, n, torch.bfloat16)
    d_mn = poisoned(m, n, torch.bfloat16)
    hopgemm.fp8_gemm_nt((a8, sfa), (b8, sfb), d_row)
    hopgemm.fp8_gemm_nt((a8, sfa), (b8, sfb_mn), d_mn)
    assert torch.equal(d_row, d_mn)
    check(d_mn, a8, sfa, b8, sfb, False)


def test_guard_bands_untouched_and_strided_output():
    m, n, k = 129, 576, 4096
    a8, sfa, b8, sfb = make_inputs(m, n, k, False, seed=11)
    buf = torch.full((m + 2, n + 64), float("nan"), device="cuda", dtype=torch.bfloat16)
    d = buf[1 : 1 + m, 32 : 32 + n]
    hopgemm.fp8_gemm_nt((a8, sfa), (b8, sfb), d)
    guard = buf.clone()
    guard[1 : 1 + m, 32 : 32 + n] = float("nan")
    assert guard.isnan().all(), "memory around d was written"
    check(d, a8, sfa, b8, sfb, False)


@pytest.mark.parametrize("m,n,k", [(4096, 7168, 16384), (65, 2112, 7168), (4095, 7176, 7296)])
def test_bitwise_identical_reruns(m, n, k):
    a8, sfa, b8, sfb = make_inputs(m, n, k, False, seed=13)
    outs = []
    for _ in range(3):
        d = poisoned(m, n, torch.bfloat16)
        hopgemm.fp8_gemm_nt((a8, sfa), (b8, sfb), d)
        outs.append(d)
    assert all(torch.equal(outs[0], o) for o in outs[1:])
    check(outs[0], a8, sfa, b8, sfb, False)


def test_nan_and_inf_inputs_propagate():
    m, n, k = 256, 1024, 1024
    a8, sfa, b8, sfb = make_inputs(m, n, k, False, seed=17)
    a8.view(torch.uint8)[5, 100] = 0x7F  # e4m3 NaN
    sfb[3, 2] = float("inf")
    d = poisoned(m, n, torch.bfloat16)
    d.zero_()
    hopgemm.fp8_gemm_nt((a8, sfa), (b8, sfb), d)
    assert d[5].isnan().all(), "a NaN in row 5 of A must reach every column of row 5"
    cols = slice(3 * 128, 4 * 128)
    assert (~d[:, cols].isfinite()).float().mean() > 0.99, "an infinite scale must reach its 128 columns"
    assert torch.isfinite(d[torch.arange(m, device="cuda") != 5][:, : 3 * 128]).all()


@pytest.mark.parametrize("recipe_1d1d", [False, True])
def test_layout_aliases_match_nt(recipe_1d1d):
    m, n, k = 257, 2112, 7168
    a8, sfa, b8, sfb = make_inputs(m, n, k, recipe_1d1d, seed=19)
    out_dtype = torch.float32 if recipe_1d1d else torch.bfloat16
    recipe = (1, 1, 128) if recipe_1d1d else (1, 128, 128)
    d_nt = poisoned(m, n, out_dtype)
    hopgemm.fp8_gemm_nt((a8, sfa), (b8, sfb), d_nt, recipe=recipe)
    check(d_nt, a8, sfa, b8, sfb, recipe_1d1d)
    for name, a_arg, b_arg in [
        ("nn", (a8, sfa), (b8.T, sfb.T)),
        ("tn", (a8.T, sfa.T), (b8.T, sfb.T)),  # DeepGEMM: n/t describe A against [M, K], B against [K, N]
        ("tt", (a8.T, sfa.T), (b8, sfb)),
    ]:
        for prefix in ("fp8_gemm", "fp8_fp4_gemm"):
            d = poisoned(m, n, out_dtype)
            getattr(hopgemm, f"{prefix}_{name}")(a_arg, b_arg, d, recipe=recipe)
            assert torch.equal(d, d_nt), f"{prefix}_{name}"


def test_cuda_graph_capture_and_replay():
    m, n, k = 128, 7168, 2048
    a8, sfa, b8, sfb = make_inputs(m, n, k, False, seed=23)
    d = poisoned(m, n, torch.bfloat16)
    hopgemm.fp8_gemm_nt((a8, sfa), (b8, sfb), d)  # warm-up: compiles and loads outside the capture
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        hopgemm.fp8_gemm_nt((a8, sfa), (b8, sfb), d)
    a2, sfa2, b2, sfb2 = make_inputs(m, n, k, False, seed=29)
    a8.copy_(a2), sfa.copy_(sfa2), b8.copy_(b2), sfb.copy_(sfb2)
    d.fill_(float("nan"))
    graph.replay()
    torch.cuda.synchronize()
    check(d, a2, sfa2, b2, sfb2, False)


def test_unwarmed_kernel_inside_capture_is_refused():
    m, n, k = 64, 1040, 2048  # a shape no other test uses, so its kernel is not loaded yet
    a8, sfa, b8, sfb = make_inputs(m, n, k, False, seed=31)
    d = poisoned(m, n, torch.bfloat16)
    # A kernel config no other test compiles (the SM count is a launch parameter: it makes no new kernel).
    fresh = dict(block_m=64, block_n=48, num_stages=5, cluster_m=1, cluster_n=1, k_splits=1, promote_overlap=0,
                 sfb_regs=0, d_in_stage=0, d_passes=1)
    graph = torch.cuda.CUDAGraph()
    with pytest.raises(RuntimeError, match="captur"):
        with torch.cuda.graph(graph):
            gemm_with((a8, sfa), (b8, sfb), d, **fresh)


def test_zero_sizes():
    # M or N = 0: d is an empty view into a NaN-poisoned buffer, c a distinct tensor (which would be copied into d): the
    # call returns without writing anything or queueing a failing launch.
    for m, n in [(0, 256), (64, 0)]:
        a8, sfa, b8, sfb = make_inputs(max(m, 1), max(n, 8), 256, False, seed=37)
        buf = torch.full((72, 264), float("nan"), device="cuda", dtype=torch.bfloat16)
        c = torch.randn(72, 264, device="cuda", dtype=torch.bfloat16)
        hopgemm.fp8_gemm_nt((a8[:m], sfa[:m]), (b8[:n], sfb[: (n + 127) // 128]), buf[4 : 4 + m, 8 : 8 + n],
                            c=c[4 : 4 + m, 8 : 8 + n])
        torch.cuda.synchronize()
        assert buf.isnan().all(), f"M = {m}, N = {n}: memory around the empty d was written"
    a8 = torch.empty(64, 0, device="cuda", dtype=torch.float8_e4m3fn)
    b8 = torch.empty(256, 0, device="cuda", dtype=torch.float8_e4m3fn)
    sfa = torch.empty(64, 0, device="cuda")
    d = torch.full((64, 256), float("nan"), device="cuda")
    c = torch.randn(64, 256, device="cuda")
    hopgemm.fp8_gemm_nt((a8, sfa), (b8, torch.empty(256, 0, device="cuda")), d, c=c, recipe=(1, 1, 128))
    assert torch.equal(d, c), "K == 0 must give D = C"
    d16 = torch.full((64, 256), float("nan"), device="cuda", dtype=torch.bfloat16)
    hopgemm.fp8_gemm_nt((a8, sfa), (b8, torch.empty(2, 0, device="cuda")), d16)
    assert (d16 == 0).all(), "K == 0 without C must give zeros"


def test_bad_inputs_raise_and_write_nothing():
    # The whole bad-input matrix runs on the CPU (tests/cpu/test_gemm_validation.cpp); here, on real memory, a rejected
    # call leaves d (the device tensor itself) untouched, also where a distinct c would be copied into d before the
    # kernel and where the rejection comes after the problem is resolved (a config that does not fit it).
    m, n, k = 128, 256, 512
    a8, sfa, b8, sfb = make_inputs(m, n, k, False, seed=41)
    d = poisoned(m, n, torch.bfloat16)
    c = torch.randn(m, n, device="cuda", dtype=torch.bfloat16)
    misaligned_a = torch.empty(m * k + 16, device="cuda", dtype=torch.float8_e4m3fn)[8 : 8 + m * k].view(m, k)
    tall = poisoned(m + 1, n, torch.bfloat16)  # d = its first m rows, c its last m: overlapping
    wide = poisoned(m, 2 * n, torch.bfloat16)  # d = its left half, c the same first element with rows of n
    cases = [
        ("a", lambda: hopgemm.fp8_gemm_nt((a8.to(torch.bfloat16), sfa), (b8, sfb), d, c=c)),  # dtype
        ("b", lambda: hopgemm.fp8_gemm_nt((a8, sfa), (b8[:, :256], sfb), d, c=c)),  # shape
        ("sfa", lambda: hopgemm.fp8_gemm_nt((a8, sfa[:, :2]), (b8, sfb), d, c=c)),  # scale shape
        ("sfb", lambda: hopgemm.fp8_gemm_nt((a8, sfa), (b8, sfb[:1]), d, c=c)),  # scale shape
        ("a", lambda: hopgemm.fp8_gemm_nt((a8.T.contiguous().T, sfa), (b8, sfb), d, c=c)),  # MN-major FP8 operand
        ("a", lambda: hopgemm.fp8_gemm_nt((misaligned_a, sfa), (b8, sfb), d, c=c)),  # alignment
        ("c", lambda: hopgemm.fp8_gemm_nt((a8, sfa), (b8, sfb), d, c=c.cpu())),  # host memory
        ("c", lambda: hopgemm.fp8_gemm_nt((a8, sfa), (b8, sfb), d, c=c.float())),  # dtype
        ("c", lambda: hopgemm.fp8_gemm_nt((a8, sfa), (b8, sfb), tall[:m], c=tall[1:])),  # overlaps d
        ("c", lambda: hopgemm.fp8_gemm_nt((a8, sfa), (b8, sfb), wide[:, :n], c=wide.view(-1)[: m * n].view(m, n))),
        ("sfb", lambda: hopgemm.fp8_gemm_nt((a8, sfa), (b8, sfb.cpu()), d, c=c)),  # host memory
    ]
    for arg, call in cases:
        with pytest.raises((ValueError, NotImplementedError, TypeError)) as info:
            call()
        assert f"'{arg}'" in str(info.value), (arg, str(info.value))
    with pytest.raises(ValueError, match="the config does not fit the problem"):
        gemm_with((a8, sfa), (b8, sfb), d, c=c, block_m=96)
    with pytest.raises(ValueError, match="the config does not fit the problem"):
        gemm_with((a8, sfa), (b8, sfb), d, c=c, k_splits=5)  # 4 k-blocks: a split without any
    torch.cuda.synchronize()
    assert d.isnan().all() and tall.isnan().all() and wide.isnan().all(), "a rejected call wrote to d"


# ---- consumer pipelines (forced through the internal config hook) ---------------------------------------------
# Each way the math warpgroups order WGMMA, promotion and stage release: per wave (promote_overlap 0), across
# k-blocks (one wave, promote_overlap 1), across the two waves of a 256-row tile (promote_overlap 1), D staged in the
# last pipeline stage (d_in_stage); both recipes, both 1D1D sfb layouts, clusters with phantom tiles (M, N not
# multiples of the tile), a partial last k-block.
PIPELINES = {
    "1d1d-256x80-waves": dict(block_m=256, block_n=80, promote_overlap=1, cluster_m=1, cluster_n=2),
    "1d1d-256x96-waves-b2": dict(block_m=256, block_n=96, promote_overlap=1, cluster_m=2, cluster_n=1),
    "1d1d-256x80-per-wave": dict(block_m=256, block_n=80, promote_overlap=0, cluster_m=1, cluster_n=1),
    "1d1d-128x160-per-wave": dict(block_m=128, block_n=160, promote_overlap=0, cluster_m=2, cluster_n=1),
    # B shared by a pair whose half (76 rows) is not whole swizzle atoms: the first CTA loads and multicasts all of it.
    "1d1d-128x152-whole-b-pair": dict(block_m=128, block_n=152, promote_overlap=0, cluster_m=2, cluster_n=1),
    "1d1d-128x128-across-blocks": dict(block_m=128, block_n=128, promote_overlap=1, cluster_m=1, cluster_n=2),
    "1d1d-128x128-per-wave": dict(block_m=128, block_n=128, promote_overlap=0),
    "1d2d-256x96-waves": dict(block_m=256, block_n=96, promote_overlap=1, cluster_m=1, cluster_n=2),
    "1d2d-256x128-d-in-stage": dict(block_m=256, block_n=128, promote_overlap=0, d_in_stage=1, d_passes=2,
                                    num_stages=4),
    "1d2d-64x96-across-blocks": dict(block_m=64, block_n=96, promote_overlap=1),
    # sfb_regs: the 1D2D B scales in the math warps' registers (33 k-blocks: a second chunk of 32).
    "1d2d-256x128-sfb-regs": dict(block_m=256, block_n=128, sfb_regs=1, cluster_m=1, cluster_n=2),
    "1d2d-256x128-sfb-regs-d-in-stage": dict(block_m=256, block_n=128, sfb_regs=1, d_in_stage=1, d_passes=2,
                                             num_stages=4),
    "1d2d-128x128-sfb-regs": dict(block_m=128, block_n=128, sfb_regs=1),
    "1d2d-64x96-sfb-regs-across-blocks": dict(block_m=64, block_n=96, sfb_regs=1, promote_overlap=1),
    # Three math warpgroups (block_m 192; M = 777 leaves a 9-row last tile).
    "1d2d-192x128-three-wgs": dict(block_m=192, block_n=128, cluster_m=1, cluster_n=2),
    "1d2d-192x128-three-wgs-sfb-regs": dict(block_m=192, block_n=128, sfb_regs=1),
    "1d2d-192x128-three-wgs-d-in-stage": dict(block_m=192, block_n=128, d_in_stage=1, d_passes=2, cluster_m=2),
    "1d1d-192x96-three-wgs": dict(block_m=192, block_n=96, promote_overlap=0, cluster_n=2),
}

# Every schedule field off (no cluster, D in stage, split or B scales in registers): a test's own overrides on top of
# it name exactly what it exercises.
PLAIN_SCHEDULE = dict(cluster_m=1, cluster_n=1, d_in_stage=0, d_passes=1, k_splits=1, sfb_regs=0)


def check_with_config(a8, sfa, b8, sfb, recipe_1d1d, overrides, sfb_arg=None):
    """The GEMM with these config overrides and A's scales MN-major (B's as given in sfb_arg, default sfb) against the
    float64 reference: 1D1D as FP32 D += A B^T with C aliased to D, 1D2D into a NaN-poisoned BF16 D."""
    m, n = a8.shape[0], b8.shape[0]
    sfa_arg = hopgemm.get_mn_major_tma_aligned_tensor(sfa)
    sfb_arg = sfb if sfb_arg is None else sfb_arg
    if recipe_1d1d:
        c = torch.randn(m, n, device="cuda", dtype=torch.float32)
        d = c.clone()
        gemm_with((a8, sfa_arg), (b8, sfb_arg), d, c=d, recipe=(1, 1, 128), **overrides)
        check(d, a8, sfa, b8, sfb, True, c)
    else:
        d = poisoned(m, n, torch.bfloat16)
        gemm_with((a8, sfa_arg), (b8, sfb_arg), d, **overrides)
        check(d, a8, sfa, b8, sfb, False)


@pytest.mark.parametrize("sfb_mn_major", [False, True])
@pytest.mark.parametrize("name", list(PIPELINES))
def test_consumer_pipelines(name, sfb_mn_major):
    recipe_1d1d = name.startswith("1d1d")
    m, n, k = 777, 1000, 4224  # 4224 = 33 k-blocks: odd count, partial last block for nothing but the tail
    a8, sfa, b8, sfb = make_inputs(m, n, k, recipe_1d1d, seed=len(name) * 31 + sfb_mn_major)
    overrides = dict(PLAIN_SCHEDULE, **PIPELINES[name])
    sfb_arg = hopgemm.get_mn_major_tma_aligned_tensor(sfb) if sfb_mn_major else sfb
    check_with_config(a8, sfa, b8, sfb, recipe_1d1d, overrides, sfb_arg=sfb_arg)


@pytest.mark.parametrize("k", [2064, 2112, 2144, 2160])
@pytest.mark.parametrize("name", list(PIPELINES))
def test_k_tail_on_every_pipeline(name, k):
    # K ending inside the last k-block (16, 64, 96, 112 of its 128, which TMA zero-fills past K) on every consumer
    # schedule, several tiles per CTA (16 CTAs), M and N not multiples of the tile.
    recipe_1d1d = name.startswith("1d1d")
    m, n = 700, 904
    a8, sfa, b8, sfb = make_inputs(m, n, k, recipe_1d1d, seed=k + len(name))
    overrides = dict(PLAIN_SCHEDULE, num_sms=16, **PIPELINES[name])
    check_with_config(a8, sfa, b8, sfb, recipe_1d1d, overrides)


@pytest.mark.parametrize("tile", [(64, 64), (128, 128), (192, 128)])
def test_k_tail_under_split_k(tile):
    # Only the last split's last k-block is the K tail (K = 2112: 17 k-blocks, the last half past K).
    m, n, k = 300, 1000, 2112
    a8, sfa, b8, sfb = make_inputs(m, n, k, False, seed=tile[0])
    d = poisoned(m, n, torch.bfloat16)
    gemm_with((a8, sfa), (b8, sfb), d, block_m=tile[0], block_n=tile[1], k_splits=3, cluster_m=1, cluster_n=1,
              d_in_stage=0, d_passes=1, promote_overlap=0)
    check(d, a8, sfa, b8, sfb, False)


def test_three_warpgroups_row_major_sfa_staged():
    # block_m 192 with row-major A scales staged by the four producer warps (3 passes of 64 rows), bitwise the result
    # of MN-major A scales read by TMA; several tiles per CTA, M and N not multiples of the tile.
    m, n, k = 2000, 3000, 4224
    a8, sfa, b8, sfb = make_inputs(m, n, k, False, seed=21)
    overrides = dict(PLAIN_SCHEDULE, block_m=192, block_n=128, sf_chunks=0)
    outs = []
    for sfa_arg in (sfa, hopgemm.get_mn_major_tma_aligned_tensor(sfa)):
        d = poisoned(m, n, torch.bfloat16)
        gemm_with((a8, sfa_arg), (b8, sfb), d, **overrides)
        check(d, a8, sfa, b8, sfb, False)
        outs.append(d)
    assert torch.equal(outs[0], outs[1])


@pytest.mark.parametrize("overrides", [
    dict(block_m=128, block_n=128),
    dict(block_m=256, block_n=128, d_in_stage=1, d_passes=2, num_stages=4, cluster_n=2),
    dict(block_m=64, block_n=64, k_splits=3, promote_overlap=1),
    dict(block_m=192, block_n=128, cluster_n=2),
])
def test_sfb_regs_across_units(overrides):
    # Several tiles per CTA: the first B-scale chunk of a CTA's next unit is loaded while the current unit runs;
    # K of 70 k-blocks (three chunks, the last partial), N not a multiple of the tile.
    m, n, k = 2000, 3000, 70 * 128
    a8, sfa, b8, sfb = make_inputs(m, n, k, False, seed=5)
    d = poisoned(m, n, torch.bfloat16)
    full = dict(PLAIN_SCHEDULE, promote_overlap=0, sfb_regs=1)
    full.update(overrides)
    gemm_with((a8, hopgemm.get_mn_major_tma_aligned_tensor(sfa)), (b8, sfb), d, **full)
    check(d, a8, sfa, b8, sfb, False)


@pytest.mark.parametrize("recipe_1d1d", [False, True])
@pytest.mark.parametrize("block_m,block_n", [(64, 128), (128, 128), (192, 128), (256, 64)])
@pytest.mark.parametrize("tail", [8, 40, -8])
def test_last_tile_row_loads_only_m_rows(block_m, block_n, tail, recipe_1d1d):
    # A's last tile row is loaded by a box of M's rows (a_tail_rows); the stage's rows past it keep an earlier tile's
    # A (8 CTAs, so each runs many tiles, the tail row among them), whose D rows must never be stored. M = 3 tiles
    # + tail (tail < 0: one row short of 4 tiles, rounded to 8 rows exactly).
    if recipe_1d1d and block_m == 192:
        block_n = 96  # 1D1D's three-warpgroup tile
    m, n, k = 3 * block_m + tail if tail > 0 else 4 * block_m + tail, 1000, 1152
    a8, sfa, b8, sfb = make_inputs(m, n, k, recipe_1d1d, seed=block_m + tail)
    overrides = dict(PLAIN_SCHEDULE, block_m=block_m, block_n=block_n, num_sms=8, promote_overlap=0)
    check_with_config(a8, sfa, b8, sfb, recipe_1d1d, overrides)


# ---- row-major scales by TMA in 4-k-block chunks (sf_chunks) ---------------------------------------------------


def rows_padded(sf, extra=0):
    """The same row-major scales in rows padded to a multiple of 4 floats (+ extra): 16-byte rows, as sf_chunks needs."""
    rows, sf_k = sf.shape
    ld = (sf_k + 3) // 4 * 4 + extra
    out = torch.full((rows, ld), float("nan"), device=sf.device, dtype=sf.dtype)[:, :sf_k]
    out.copy_(sf)
    return out


SCALE_CHUNK_PIPELINES = dict(PIPELINES, **{"1d1d-64x128-across-blocks": dict(block_m=64, block_n=128, promote_overlap=1)})


@pytest.mark.parametrize("name", list(SCALE_CHUNK_PIPELINES))
def test_scale_chunks_consumer_pipelines(name):
    # Every consumer schedule with sfa (and 1D1D sfb) row-major in padded rows: 33 k-blocks (chunks of 4, then 1, whose
    # box reads past the 33 columns: zero-filled), several tiles per CTA (the chunk count carries across units), and
    # bitwise the result of per-stage scales (sf_chunks=0, sfa MN-major: valid with 256-row tiles too).
    recipe_1d1d = name.startswith("1d1d")
    m, n, k = 2000, 3000, 4224
    a8, sfa, b8, sfb = make_inputs(m, n, k, recipe_1d1d, seed=len(name) * 17)
    overrides = dict(PLAIN_SCHEDULE, **SCALE_CHUNK_PIPELINES[name])
    sfa_rows = rows_padded(sfa, extra=4)
    sfb_rows = rows_padded(sfb) if recipe_1d1d else sfb
    outs = []
    for sf_chunks in (1, 0):
        sfa_arg = sfa_rows if sf_chunks else hopgemm.get_mn_major_tma_aligned_tensor(sfa)
        if recipe_1d1d:
            c = torch.randn(m, n, device="cuda", dtype=torch.float32, generator=torch.Generator("cuda").manual_seed(3))
            d = c.clone()
            gemm_with((a8, sfa_arg), (b8, sfb_rows), d, c=d, recipe=(1, 1, 128), sf_chunks=sf_chunks, **overrides)
            check(d, a8, sfa, b8, sfb, True, c)
        else:
            d = poisoned(m, n, torch.bfloat16)
            gemm_with((a8, sfa_arg), (b8, sfb_rows), d, sf_chunks=sf_chunks, **overrides)
            check(d, a8, sfa, b8, sfb, False)
        outs.append(d)
    assert torch.equal(outs[0], outs[1]), "sf_chunks must not change a bit of the result"


@pytest.mark.parametrize("overrides", [
    dict(block_m=64, block_n=64, k_splits=3, promote_overlap=1),   # units of 11 k-blocks: 4, 4, 3
    dict(block_m=128, block_n=64, k_splits=5, promote_overlap=0),  # units of 7: 4, 3
])
@pytest.mark.parametrize("recipe_1d1d", [False, True])
def test_scale_chunks_split_k(overrides, recipe_1d1d):
    m, n, k = 300, 1040, 4224
    a8, sfa, b8, sfb = make_inputs(m, n, k, recipe_1d1d, seed=11)
    d = poisoned(m, n, torch.float32 if recipe_1d1d else torch.bfloat16)
    full = dict(cluster_m=1, cluster_n=1, d_in_stage=0, d_passes=1, sfb_regs=0, sf_chunks=1)
    full.update(overrides)
    sfb_arg = rows_padded(sfb) if recipe_1d1d else sfb
    gemm_with((a8, rows_padded(sfa)), (b8, sfb_arg), d, recipe=(1, 1, 128) if recipe_1d1d else None, **full)
    check(d, a8, sfa, b8, sfb, recipe_1d1d)


def test_scale_chunks_1d1d_sfb_rows_only_and_unaligned_rows():
    # 1D1D with sfa MN-major and sfb row-major: only sfb comes in chunks. Rows of 5 floats (K = 576, contiguous) are not
    # 16-byte aligned: the heuristics keep the per-stage copies there, and forcing sf_chunks is refused.
    m, n, k = 1000, 2000, 4096
    a8, sfa, b8, sfb = make_inputs(m, n, k, True, seed=13)
    d = poisoned(m, n, torch.float32)
    gemm_with((a8, hopgemm.get_mn_major_tma_aligned_tensor(sfa)), (b8, sfb), d, recipe=(1, 1, 128),
              block_m=128, block_n=152, cluster_m=1, cluster_n=1, promote_overlap=0, sf_chunks=1)
    check(d, a8, sfa, b8, sfb, True)
    a8, sfa, b8, sfb = make_inputs(129, 576, 576, True, seed=14)
    d = poisoned(129, 576, torch.float32)
    hopgemm.fp8_gemm_nt((a8, sfa), (b8, sfb), d, recipe=(1, 1, 128))
    check(d, a8, sfa, b8, sfb, True)
    with pytest.raises(Exception, match="does not fit the problem .sf_chunks needs scale rows that are 16-byte aligned"):
        gemm_with((a8, sfa), (b8, sfb), d, recipe=(1, 1, 128), sf_chunks=1)



# ---- split-K (forced through the internal config hook; the heuristics pick it only where it pays) ----------


def gemm_with(a, b, d, c=None, recipe=None, **overrides):
    hopgemm._C._fp8_gemm_nt_with_config(a, b, d, c=c, recipe=recipe, overrides=overrides)


# The split that finishes last sums the tile's partials inside the GEMM kernel.
@pytest.mark.parametrize("k_splits", [2, 3, 4, 5, 6, 7, 8])
@pytest.mark.parametrize("m,n,k", [(1, 2112, 7296), (65, 576, 4096), (129, 1040, 7168)])
def test_split_k_1d2d(m, n, k, k_splits):
    a8, sfa, b8, sfb = make_inputs(m, n, k, False, seed=m + n + k + k_splits)
    d = poisoned(m, n, torch.bfloat16)
    gemm_with((a8, sfa), (b8, sfb), d, k_splits=k_splits, block_m=64 if m <= 64 else 128, block_n=64,
              cluster_m=1, cluster_n=1)
    check(d, a8, sfa, b8, sfb, False)


@pytest.mark.parametrize("k_splits", [2, 3, 8])
@pytest.mark.parametrize("c_mode", ["none", "aliased", "distinct"])
@pytest.mark.parametrize("m,n,k", [(1, 576, 4096), (129, 2112, 7296)])
def test_split_k_1d1d_fp32_accumulate(m, n, k, c_mode, k_splits):
    a8, sfa, b8, sfb = make_inputs(m, n, k, True, seed=m + n + k)
    c = torch.randn(m, n, device="cuda", dtype=torch.float32) * 32
    tile = dict(k_splits=k_splits, block_m=128, block_n=64, cluster_m=1, cluster_n=1)
    if c_mode == "aliased":
        d = c.clone()
        gemm_with((a8, sfa), (b8, sfb), d, c=d, recipe=(1, 1, 128), **tile)
    elif c_mode == "distinct":
        d = poisoned(m, n, torch.float32)
        c_before = c.clone()
        gemm_with((a8, sfa), (b8, sfb), d, c=c, recipe=(1, 1, 128), **tile)
        assert torch.equal(c, c_before), "c must not be modified"
    else:
        d = poisoned(m, n, torch.float32)
        gemm_with((a8, sfa), (b8, sfb), d, recipe=(1, 1, 128), **tile)
    check(d, a8, sfa, b8, sfb, True, None if c_mode == "none" else c)


def test_split_k_bf16_accumulate_mn_major_sfa():
    m, n, k = 257, 1024, 4096  # 3 m-blocks of 128, the last with one row
    a8, sfa, b8, sfb = make_inputs(m, n, k, False, seed=3)
    c = torch.randn(m, n, device="cuda", dtype=torch.bfloat16)
    d = c.clone()
    gemm_with((a8, hopgemm.get_mn_major_tma_aligned_tensor(sfa)), (b8, sfb), d, c=d, k_splits=4, block_m=128,
              block_n=128, cluster_m=1, cluster_n=1)
    check(d, a8, sfa, b8, sfb, False, c)


@pytest.mark.parametrize("k_splits", [1, 4, 7])
def test_split_k_rejects_empty_splits_and_is_bitwise_reproducible(k_splits):
    # Whichever split finishes last sums the tile, always in split order; its tile counters must be back at zero after
    # each call, or the next call's last split would be misjudged.
    m, n, k = 65, 2112, 7168
    a8, sfa, b8, sfb = make_inputs(m, n, k, False, seed=43)
    outs = []
    for _ in range(3):
        d = poisoned(m, n, torch.bfloat16)
        gemm_with((a8, sfa), (b8, sfb), d, k_splits=k_splits, block_m=64, block_n=64)
        outs.append(d)
    assert all(torch.equal(outs[0], o) for o in outs[1:])
    check(outs[0], a8, sfa, b8, sfb, False)
    with pytest.raises(ValueError, match="config"):  # 2 k-blocks cannot be cut into 3 non-empty splits
        gemm_with((a8[:, :256], sfa[:, :2]), (b8[:, :256], sfb[:, :2]), d, k_splits=3, block_m=64, block_n=64)


@pytest.mark.parametrize("tile", [
    dict(block_m=256, block_n=128, k_splits=2, d_in_stage=0, d_passes=1),
    dict(block_m=256, block_n=128, k_splits=2, d_in_stage=1, d_passes=2),  # D staged in the last stage
    dict(block_m=128, block_n=192, k_splits=3, d_in_stage=0, d_passes=1),  # a last split >= 2 reads its own back
    dict(block_m=128, block_n=128, k_splits=4, d_in_stage=1, d_passes=2),
    dict(block_m=192, block_n=128, k_splits=3, d_in_stage=0, d_passes=1),  # three math warpgroups
    dict(block_m=192, block_n=128, k_splits=2, d_in_stage=1, d_passes=2, sfb_regs=1),
])
def test_split_k_fused_largest_tiles_sum_in_place(tile):
    # The last split sums the partials in its accumulators' registers, in split order whichever split it is: the same
    # bits on every run. Partial tiles at both edges; splits of 19 k-blocks (15, 15, 15, 12 for four).
    m, n, k = 520, 1000, 7296
    a8, sfa, b8, sfb = make_inputs(m, n, k, False, seed=53)
    outs = []
    for _ in range(3):
        d = poisoned(m, n, torch.bfloat16)
        gemm_with((a8, sfa), (b8, sfb), d, cluster_m=1, cluster_n=1, promote_overlap=0, **tile)
        outs.append(d)
    assert all(torch.equal(outs[0], o) for o in outs[1:])
    check(outs[0], a8, sfa, b8, sfb, False)


def test_split_k_graph_capture_after_warm_up():
    m, n, k = 64, 2112, 7168
    a8, sfa, b8, sfb = make_inputs(m, n, k, False, seed=47)
    d = poisoned(m, n, torch.bfloat16)
    tile = dict(k_splits=6, block_m=64, block_n=64)
    gemm_with((a8, sfa), (b8, sfb), d, **tile)  # warm-up: kernels loaded, workspace allocated
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        gemm_with((a8, sfa), (b8, sfb), d, **tile)
    a2, sfa2, b2, sfb2 = make_inputs(m, n, k, False, seed=53)
    a8.copy_(a2), sfa.copy_(sfa2), b8.copy_(b2), sfb.copy_(sfb2)
    d.fill_(float("nan"))
    graph.replay()
    torch.cuda.synchronize()
    check(d, a2, sfa2, b2, sfb2, False)


def test_split_k_larger_workspace_inside_capture_is_graph_owned():
    # Inside a capture the partials come from the graph's own memory nodes (src/runtime/workspace.hpp): a capture that
    # needs more than the warm-up call used is not refused, allocates nothing while capturing, and replays right.
    m, n, k = 4096, 4096, 1024  # 8 x 64 MiB of partials: larger than any other test's workspace
    a8, sfa, b8, sfb = make_inputs(m, n, k, False, seed=59)
    d = poisoned(m, n, torch.bfloat16)
    # Every field the heuristics could set differently for the two M pinned: one kernel for both calls.
    tile = dict(k_splits=8, block_m=128, block_n=128, cluster_m=1, cluster_n=1, promote_overlap=0, d_passes=1,
                d_in_stage=0)
    gemm_with((a8[:64], sfa[:64]), (b8, sfb), d[:64], **tile)  # kernels loaded, the stream's partials still small
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        gemm_with((a8, sfa), (b8, sfb), d, **tile)
    d.fill_(float("nan"))
    graph.replay()
    torch.cuda.synchronize()
    check(d, a8, sfa, b8, sfb, False)


def test_heuristics_split_decode_shape_matches_reference():
    m, n, k = 1, 2112, 7168  # the model picks split-K here (tests/cpu/test_heuristics.cpp)
    a8, sfa, b8, sfb = make_inputs(m, n, k, False, seed=61)
    d = poisoned(m, n, torch.bfloat16)
    hopgemm.fp8_gemm_nt((a8, sfa), (b8, sfb), d)
    check(d, a8, sfa, b8, sfb, False)

