"""hopgemm.tf32_hc_prenorm_gemm on the GPU against a float64 reference: d = a @ b^T (TF32 inputs: a BF16 is exact in
TF32, b rounded to TF32 to nearest) and the squared sums of a's rows, with and without K splits (each split's
part, summed), outputs poisoned with NaN first (every element written, a split without k-blocks included), DeepGEMM's
shapes and odd ones, the torch op and a CUDA graph. Skips (with the reason) where torch or an SM90 GPU is missing."""
import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available() or torch.cuda.get_device_capability()[0] != 9:
    pytest.skip("needs an SM90 (Hopper) GPU", allow_module_level=True)

import hopgemm  # noqa: E402
from hopgemm.testing import calc_diff  # noqa: E402


def _inputs(m, n, k, seed):
    gen = torch.Generator(device="cuda").manual_seed(seed)
    a = torch.randn(m, k, device="cuda", generator=gen).to(torch.bfloat16)
    b = torch.randn(n, k, device="cuda", generator=gen)
    return a, b


def _tf32(x):
    """x (FP32) rounded to TF32's 10 mantissa bits, to nearest (ties away from zero), as the op's B copy rounds it
    (torch's TF32 matmul rounds the same way; the tensor cores alone would truncate)."""
    return ((x.view(torch.int32) + 0x1000) & ~0x1FFF).view(torch.float32)


# DeepGEMM's test_hyperconnection.py: m in (13, 137, 4096, 8192) x (n, k) in ((24, 28672), (24, 7680), (24, 7168)) x
# num_splits in (None, 16); odd ones besides (N 8 and 32, K not a multiple of 64, more splits than k-blocks).
CASES = [(13, 24, 28672, None), (137, 24, 7680, 16), (4096, 24, 7168, None), (8192, 24, 7168, 16),
         (1, 8, 64, None), (65, 32, 1000, 3), (200, 16, 136, 5)]


@pytest.mark.parametrize("m,n,k,num_splits", CASES)
def test_hc_prenorm_matches_reference(m, n, k, num_splits):
    a, b = _inputs(m, n, k, seed=m + n + k)
    shape_d = (m, n) if num_splits is None else (num_splits, m, n)
    shape_s = (m,) if num_splits is None else (num_splits, m)
    d = torch.full(shape_d, float("nan"), device="cuda", dtype=torch.float32)
    s = torch.full(shape_s, float("nan"), device="cuda", dtype=torch.float32)
    hopgemm.tf32_hc_prenorm_gemm(a, b, d, s, num_splits=num_splits)
    assert not torch.isnan(d).any() and not torch.isnan(s).any(), "an element was not written"
    final_d = d if num_splits is None else d.sum(0)
    final_s = s if num_splits is None else s.sum(0)
    a64 = a.double()
    ref_s = a64.square().sum(-1)
    ref_d = a64 @ b.double().T
    # TF32 keeps 10 mantissa bits of b: each product is off by at most 2^-11 of |a b| (rounded); 2^-10 for margin.
    bound = 2.0 ** -10 * (a64.abs() @ b.double().abs().T) + 1e-6 * ref_d.abs().max()
    assert ((final_d.double() - ref_d).abs() <= bound).all()
    assert torch.allclose(final_s.double(), ref_s, rtol=1e-5, atol=1e-5)
    ref_tf32 = a64 @ _tf32(b).double().T
    assert calc_diff(final_d, ref_tf32) < 1e-8 and calc_diff(final_s, ref_s) < 1e-8  # DeepGEMM's bar
    if num_splits is None:  # DeepGEMM's test: against torch's own TF32 matmul (rounds b to nearest)
        torch.backends.cuda.matmul.allow_tf32 = True
        try:
            assert calc_diff(final_d, a.float() @ b.T) < 1e-8
        finally:
            torch.backends.cuda.matmul.allow_tf32 = False


def test_hc_prenorm_torch_op_and_graph():
    a, b = _inputs(300, 24, 7168, seed=7)
    d = torch.empty(4, 300, 24, device="cuda")
    s = torch.empty(4, 300, device="cuda")
    hopgemm.tf32_hc_prenorm_gemm(a, b, d, s, num_splits=4)
    d_op, s_op = torch.full_like(d, float("nan")), torch.full_like(s, float("nan"))
    torch.ops.hopgemm.tf32_hc_prenorm_gemm(a, b, d_op, s_op, 4)
    d_graph, s_graph = torch.full_like(d, float("nan")), torch.full_like(s, float("nan"))
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        hopgemm.tf32_hc_prenorm_gemm(a, b, d_graph, s_graph, num_splits=4)
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(d_op, d) and torch.equal(s_op, s) and torch.equal(d_graph, d) and torch.equal(s_graph, s)
