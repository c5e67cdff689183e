"""DeepGEMM's cuBLASLt wrappers (hopgemm.cublaslt_gemm_nt/nn/tn/tt) on the GPU, element-wise against a float64
reference: the four layouts (FP8: K-major only, as cuBLASLt takes it on SM90), BF16 and FP8 (unscaled) inputs, BF16
and FP32 outputs, C absent, aliasing D or distinct, K = 0 and M = 0, a non-default stream.

Run: pytest tests/gpu/test_cublaslt.py  (needs torch on an SM90 GPU and the hopgemm package; skips otherwise)."""
import pytest

from sm90_torch import require_torch_on_sm90

torch = require_torch_on_sm90("DeepGEMM's cuBLASLt wrappers")
hopgemm = pytest.importorskip("hopgemm", reason="the hopgemm package is not installed")


def operands(m, n, k, in_dtype, layout, seed=0):
    """A[M, K] and B[N, K] as the layout's op takes them (nt: as is; nn: B as [K, N]; tn: A as [K, M]; tt: both),
    each contiguous, and their float64 values."""
    g = torch.Generator(device="cuda").manual_seed(seed)
    a = torch.randn(m, k, device="cuda", generator=g).to(in_dtype)
    b = torch.randn(n, k, device="cuda", generator=g).to(in_dtype)
    a64, b64 = a.double(), b.double()
    a_arg = a.t().contiguous() if layout[0] == "t" else a
    b_arg = b.t().contiguous() if layout[1] == "n" else b
    return a_arg, b_arg, a64, b64


def check(d, ref, abs_products, out_dtype):
    """Every element within the project's tensor-core model (hopgemm.testing: FP8_ACC_TOL * sum|a b| for the
    accumulation) plus two roundings to the output type (cuBLASLt may round a partial or C through it: on an H200 the
    BF16 results were up to 2 BF16 ulps off, the FP8 ones 8e-5 * sum|a b|, beyond a strict FP32 accumulation's bound)."""
    assert not bool(d.isnan().any()), "NaN left in D"
    eps = hopgemm.testing.OUTPUT_EPS[str(out_dtype).replace("torch.", "")]
    bound = hopgemm.testing.FP8_ACC_TOL * abs_products + 2 * eps * ref.abs()
    hopgemm.testing.assert_close_elementwise(d, ref, bound, name="d")


# cuBLASLt's FP8 GEMMs on SM90 take only K-major A and B (DeepGEMM calls them so): FP8 runs the nt layout only.
CASES = [(layout, in_dtype) for in_dtype in (torch.bfloat16, torch.float8_e4m3fn)
         for layout in (("nt", "nn", "tn", "tt") if in_dtype == torch.bfloat16 else ("nt",))]


@pytest.mark.parametrize("layout, in_dtype", CASES)
@pytest.mark.parametrize("out_dtype", [torch.bfloat16, torch.float32])
@pytest.mark.parametrize("accumulate", ["none", "alias", "distinct"])
def test_cublaslt_gemm_matches_float64(layout, in_dtype, out_dtype, accumulate):
    m, n, k = 192, 320, 512
    a, b, a64, b64 = operands(m, n, k, in_dtype, layout)
    ref, abs_products = a64 @ b64.t(), a64.abs() @ b64.abs().t()
    c = None
    d = torch.full((m, n), float("nan"), device="cuda", dtype=out_dtype)
    if accumulate != "none":
        c = (torch.randn(m, n, device="cuda") * 4).to(out_dtype)
        ref = ref + c.double()
        if accumulate == "alias":
            d.copy_(c)
            c = d
    getattr(hopgemm, f"cublaslt_gemm_{layout}")(a, b, d, c)
    torch.cuda.synchronize()
    check(d, ref, abs_products, out_dtype)


def test_cublaslt_gemm_k_zero_and_m_zero():
    a = torch.randn(64, 0, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(32, 0, device="cuda", dtype=torch.bfloat16)
    d = torch.full((64, 32), 5.0, device="cuda", dtype=torch.bfloat16)
    hopgemm.cublaslt_gemm_nt(a, b, d)
    assert bool((d == 0).all())
    c = torch.randn(64, 32, device="cuda", dtype=torch.bfloat16)
    hopgemm.cublaslt_gemm_nt(a, b, d, c)
    assert torch.equal(d, c)
    empty = torch.empty(0, 32, device="cuda", dtype=torch.bfloat16)
    hopgemm.cublaslt_gemm_nt(torch.empty(0, 16, device="cuda", dtype=torch.bfloat16),
                             torch.randn(32, 16, device="cuda", dtype=torch.bfloat16), empty)


def test_cublaslt_gemm_runs_on_the_current_stream_and_names_nvjet():
    # DeepGEMM's tests time it with bench_kineto(..., ('nvjet', 'reduce')): cuBLASLt's SM90 kernels are nvjet_*.
    a = torch.randn(4096, 7168, device="cuda", dtype=torch.bfloat16).to(torch.float8_e4m3fn)
    b = torch.randn(2112, 7168, device="cuda", dtype=torch.bfloat16).to(torch.float8_e4m3fn)
    d = torch.empty(4096, 2112, device="cuda", dtype=torch.bfloat16)
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        hopgemm.cublaslt_gemm_nt(a, b, d)
    stream.synchronize()
    a64, b64 = a[:256].double(), b.double()
    check(d[:256], a64 @ b64.t(), a64.abs() @ b64.abs().t(), torch.bfloat16)
    t_nvjet = hopgemm.testing.bench_kineto(lambda: hopgemm.cublaslt_gemm_nt(a, b, d), "nvjet",
                                           suppress_kineto_output=True)
    assert t_nvjet > 0, "no kernel named nvjet ran (DeepGEMM's tests would time nothing)"
