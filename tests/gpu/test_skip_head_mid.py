"""fp8_gemm_nt_skip_head_mid on the GPU: the dense FP8 GEMM whose heads of left + right columns land in d's heads of
left + mid + right columns. d is poisoned with NaN: every kept column must be written and hold the float64 reference
of the dequantised inputs (element-wise bound, fp8_gemm_inputs.check), every middle column must still be NaN
(untouched), and the kept columns must equal fp8_gemm_nt's output bit for bit (the same kernel but for the epilogue's
column map). Skips (with the reason) where torch or an SM90 GPU is missing."""
import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available() or torch.cuda.get_device_capability()[0] != 9:
    pytest.skip("needs an SM90 (Hopper) GPU", allow_module_level=True)

import hopgemm  # noqa: E402
from fp8_gemm_inputs import check, make_inputs  # noqa: E402


def _split_heads(d, head_splits):
    """(kept [m, n] as the GEMM wrote it, middle columns [m, heads, mid]) of d [m, heads * (left + mid + right)]."""
    left, mid, right = head_splits
    heads = d.shape[1] // (left + mid + right)
    per_head = d.view(d.shape[0], heads, left + mid + right)
    kept = torch.cat([per_head[:, :, :left], per_head[:, :, left + mid:]], dim=2).reshape(d.shape[0], -1)
    return kept, per_head[:, :, left:left + mid]


CASES = [
    # DeepGEMM's test_gemm_skip_head_mid: (128, 64, 128), M 128 / 4096, N 32768 / 8192, K 512.
    (128, 32768, 512, (128, 64, 128), torch.bfloat16),
    (4096, 8192, 512, (128, 64, 128), torch.bfloat16),
    # Odd M (partial last tile row), K not a multiple of 128, split-K sized problems, uneven parts, a head of only
    # right columns, FP32 d (32-column parts).
    (1, 1536, 7168, (128, 64, 128), torch.bfloat16),
    (33, 4608, 1536, (64, 128, 128), torch.bfloat16),
    (129, 2048, 144, (0, 64, 128), torch.bfloat16),
    (4095, 3072, 4096, (192, 64, 64), torch.bfloat16),
    (257, 2304, 7168, (32, 32, 64), torch.float32),
]


@pytest.mark.parametrize("m,n,k,head_splits,dtype", CASES)
def test_skip_head_mid_matches_reference(m, n, k, head_splits, dtype):
    left, mid, right = head_splits
    a8, sfa, b8, sfb = make_inputs(m, n, k, False, seed=m + n + k)
    d = torch.full((m, n // (left + right) * (left + mid + right)), float("nan"), device="cuda", dtype=dtype)
    hopgemm.fp8_gemm_nt_skip_head_mid((a8, sfa), (b8, sfb), d, head_splits)
    kept, middle = _split_heads(d, head_splits)
    check(kept.contiguous(), a8, sfa, b8, sfb, False)
    assert torch.isnan(middle).all(), "the middle columns of each head must be left untouched"
    plain = torch.empty((m, n), device="cuda", dtype=dtype)
    hopgemm.fp8_gemm_nt((a8, sfa), (b8, sfb), plain)
    assert torch.equal(kept, plain), "the kept columns must be fp8_gemm_nt's output"


def test_skip_head_mid_mn_major_sfa_torch_op_and_graph():
    m, n, k, head_splits = 200, 4096, 2048, (128, 64, 128)
    a8, sfa, b8, sfb = make_inputs(m, n, k, False, seed=3)
    width = n // 256 * 320
    d_ref = torch.full((m, width), float("nan"), device="cuda", dtype=torch.bfloat16)
    hopgemm.fp8_gemm_nt_skip_head_mid((a8, sfa), (b8, sfb), d_ref, head_splits)
    # MN-major TMA-aligned sfa, the torch op, and a CUDA graph replay all write the same bits.
    d_mn = torch.full_like(d_ref, float("nan"))
    hopgemm.fp8_gemm_nt_skip_head_mid((a8, hopgemm.get_mn_major_tma_aligned_tensor(sfa)), (b8, sfb), d_mn, head_splits)
    assert torch.equal(d_mn.nan_to_num(7.0), d_ref.nan_to_num(7.0))
    d_op = torch.full_like(d_ref, float("nan"))
    torch.ops.hopgemm.fp8_gemm_nt_skip_head_mid(a8, sfa, b8, sfb, d_op, list(head_splits))
    assert torch.equal(d_op.nan_to_num(7.0), d_ref.nan_to_num(7.0))
    d_graph = torch.full_like(d_ref, float("nan"))
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        hopgemm.fp8_gemm_nt_skip_head_mid((a8, sfa), (b8, sfb), d_graph, head_splits)
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(d_graph.nan_to_num(7.0), d_ref.nan_to_num(7.0))


@pytest.mark.parametrize("head_splits,n,match", [
    ((128, 64, 96), 512, "multiples of 64 columns"),
    ((128, 0, 128), 512, "mid > 0"),
    ((128, 64, 128), 384, "multiple of left \\+ right"),
])
def test_skip_head_mid_bad_splits(head_splits, n, match):
    a8, sfa, b8, sfb = make_inputs(64, n, 256, False, seed=1)
    d = torch.empty((64, 4096), device="cuda", dtype=torch.bfloat16)
    with pytest.raises(ValueError, match=match):
        hopgemm.fp8_gemm_nt_skip_head_mid((a8, sfa), (b8, sfb), d, head_splits)
