"""hopgemm.einsum on the GPU: DeepGEMM's BF16 forms against a float64 reference, outputs poisoned with NaN first (every
element must be written), odd shapes (M = 1 and tails, K tails inside a k-block, N not a multiple of the tile,
strided slices between batches as DeepGEMM's tests pass them), the accumulating and the BF16 forms of bmk,bnk->mn,
split-K, a CUDA graph and the torch op. Skips (with the reason) where torch or an SM90 GPU is missing."""
import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available() or torch.cuda.get_device_capability()[0] != 9:
    pytest.skip("needs an SM90 (Hopper) GPU", allow_module_level=True)

import hopgemm  # noqa: E402
from hopgemm.testing import calc_diff  # noqa: E402


def _randn(*shape, seed, scale=1.0):
    gen = torch.Generator(device="cuda").manual_seed(seed)
    return (torch.randn(*shape, device="cuda", generator=gen) * scale).to(torch.bfloat16)


def _check(d, ref, tol):
    """Every element written (no NaN left of the poison), each within tol x the reference's scale, and calc_diff."""
    assert not torch.isnan(d).any(), "an element of d was not written"
    ref = ref.to(torch.float64)
    err = (d.to(torch.float64) - ref).abs()
    bound = tol * (ref.abs() + ref.abs().mean())
    bad = err > bound
    assert not bad.any(), f"{int(bad.sum())} elements off, first at {tuple(bad.nonzero()[0].tolist())}"
    assert calc_diff(d, ref) < 1e-5


# (b, h, r, d): DeepGEMM's test_einsum.py pairs (h, r, d) with b in (4, 32, 128, 4096, 8192); odd ones besides.
HEAD_CASES = [(4, 128, 512, 128), (4096, 128, 512, 128), (32, 8, 4096, 1024), (8192, 8, 4096, 1024),
              (1, 3, 136, 200), (77, 5, 264, 72), (300, 16, 1000, 520)]


@pytest.mark.parametrize("b,h,r,d", HEAD_CASES)
def test_bhr_hdr_bhd(b, h, r, d):
    x = _randn(b, h, r, seed=b + h + r)
    fy = _randn(h, d, r + 128, seed=d)  # DeepGEMM's test slices y out of a wider tensor
    y = fy[:, :, :r]
    z = torch.full((b, h, d), float("nan"), device="cuda", dtype=torch.bfloat16)
    hopgemm.einsum("bhr,hdr->bhd", x, y, z)
    ref = torch.einsum("bhr,hdr->bhd", x.double(), y.double())
    _check(z, ref, 1e-2)


@pytest.mark.parametrize("b,h,r,d", HEAD_CASES)
def test_bhd_hdr_bhr(b, h, r, d):
    x = _randn(b, h, d, seed=b + h + d)
    fy = _randn(h, d, r + 128, seed=r)
    y = fy[:, :, :r]
    z = torch.full((b, h, r), float("nan"), device="cuda", dtype=torch.bfloat16)
    hopgemm.einsum("bhd,hdr->bhr", x, y, z)
    ref = torch.einsum("bhd,hdr->bhr", x.double(), y.double())
    _check(z, ref, 1e-2)


# (s, m, n, k): DeepGEMM's (m, n, k) with s in (129, 4096, 8192); odd ones besides.
SUM_CASES = [(129, 128, 384, 128), (4096, 256, 256, 256), (8192, 384, 128, 384), (3, 1, 8, 8), (50, 200, 72, 136),
             (1, 513, 264, 1000)]


@pytest.mark.parametrize("s,m,n,k", SUM_CASES)
@pytest.mark.parametrize("mode", ["fp32_aliased", "fp32_distinct", "bf16"])
def test_bmk_bnk_mn(s, m, n, k, mode):
    a = _randn(s, m, k, seed=s + m, scale=0.25)
    b = _randn(s, n, k, seed=n + k, scale=0.25)
    ref = torch.bmm(a.double(), b.double().mT).sum(0)
    if mode == "bf16":
        d = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        hopgemm.einsum("bmk,bnk->mn", a, b, d)
        _check(d, ref, 1e-2)
        return
    c = torch.randn(m, n, device="cuda", dtype=torch.float32) * 4
    if mode == "fp32_aliased":
        d = c.clone()
        hopgemm.einsum("bmk,bnk->mn", a, b, d, c=d)
    else:
        d = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float32)
        c_before = c.clone()
        hopgemm.einsum("bmk,bnk->mn", a, b, d, c=c)
        assert torch.equal(c, c_before), "c must not be modified"
    _check(d, ref + c.double(), 2e-3)  # FP32 sums over up to 3M products: the tensor cores' accumulation error


@pytest.mark.parametrize("overrides", [{"block_m": 128, "block_n": 128, "k_splits": 32},
                                       {"block_m": 128, "block_n": 64, "k_splits": 24},
                                       {"block_m": 64, "block_n": 64, "k_splits": 12}])
def test_bmk_bnk_mn_wide_split_k(overrides):
    """Split-K past 8 splits (the batch-summed K's few tiles over every SM), forced through the grouped overrides:
    the same sum as the reference (and as the heuristics' pick, up to FP32 summation order), bitwise on reruns."""
    s, m, n, k = 1024, 256, 256, 256
    a = _randn(s, m, k, seed=5, scale=0.25)
    b = _randn(s, n, k, seed=6, scale=0.25)
    c = torch.randn(m, n, device="cuda", dtype=torch.float32)
    ref = torch.bmm(a.double(), b.double().mT).sum(0) + c.double()
    runs = []
    hopgemm._C._set_grouped_config_overrides(overrides)
    try:
        for _ in range(2):
            d = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float32)
            hopgemm.einsum("bmk,bnk->mn", a, b, d, c=c)
            runs.append(d)
        with pytest.raises(ValueError, match="k_splits"):  # 33 splits: past the kernels' 32
            hopgemm._C._set_grouped_config_overrides({**overrides, "k_splits": 33})
            hopgemm.einsum("bmk,bnk->mn", a, b, torch.empty_like(c), c=c)
    finally:
        hopgemm._C._set_grouped_config_overrides({})
    _check(runs[0], ref, 2e-3)
    assert torch.equal(runs[0], runs[1]), "split-K's fixed summation order: reruns are bitwise equal"


def test_einsum_graph_torch_op_and_reruns():
    x = _randn(256, 16, 512, seed=1)
    y = _randn(16, 384, 512, seed=2)
    z = torch.full((256, 16, 384), float("nan"), device="cuda", dtype=torch.bfloat16)
    hopgemm.einsum("bhr,hdr->bhd", x, y, z)
    z_op = torch.full_like(z, float("nan"))
    torch.ops.hopgemm.einsum("bhr,hdr->bhd", x, y, z_op)
    z_graph = torch.full_like(z, float("nan"))
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        hopgemm.einsum("bhr,hdr->bhd", x, y, z_graph)
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(z_op, z) and torch.equal(z_graph, z)  # bitwise: the same kernel on the same inputs


def test_einsum_use_cublaslt_matches():
    x = _randn(64, 8, 512, seed=3)
    y = _randn(8, 256, 512, seed=4)
    z = torch.empty((64, 8, 256), device="cuda", dtype=torch.bfloat16)
    z_lt = torch.empty_like(z)
    hopgemm.einsum("bhr,hdr->bhd", x, y, z)
    hopgemm.einsum("bhr,hdr->bhd", x, y, z_lt, use_cublaslt=True)
    assert calc_diff(z, z_lt) < 1e-5


def test_einsum_bad_alignment():
    x = _randn(8, 4, 520, seed=5)[:, :, 4:516]  # data 8 bytes past a 16-byte boundary
    y = _randn(4, 64, 512, seed=6)
    z = torch.empty((8, 4, 64), device="cuda", dtype=torch.bfloat16)
    with pytest.raises(ValueError, match="16-byte aligned"):
        hopgemm.einsum("bhr,hdr->bhd", x, y, z)


def _fp8_operands(b, h, r, d, seed):
    """DeepGEMM's test_fp8_bhr_hdr_bhd inputs: x per 1x128 (per_token_cast_to_fp8 of x.view(-1, r), viewed back), y per
    128x128 block of each head; and their dequantised float64 values."""
    from hopgemm.utils import per_block_cast_to_fp8, per_token_cast_to_fp8

    x = _randn(b, h, r, seed=seed)
    y = _randn(h, d, r, seed=seed + 1)
    x8, sfx = per_token_cast_to_fp8(x.view(-1, r))
    sf_r = (r + 127) // 128
    x8, sfx = x8.view(b, h, r), sfx.view(b, h, sf_r)
    y8 = torch.empty_like(y, dtype=torch.float8_e4m3fn)
    sfy = torch.empty((h, (d + 127) // 128, sf_r), device="cuda", dtype=torch.float32)
    for i in range(h):
        y8[i], sfy[i] = per_block_cast_to_fp8(y[i])
    x_deq = x8.double() * sfx.double().repeat_interleave(128, dim=2)[:, :, :r]
    y_deq = y8.double() * sfy.double().repeat_interleave(128, dim=1)[:, :d].repeat_interleave(128, dim=2)[:, :, :r]
    return (x8, sfx), (y8, sfy), x_deq, y_deq


# (b, h, r, d): DeepGEMM's (8, 4096, 1024) with b in (4, 32, 128, 4096, 8192); odd ones (K tails, R = ceil(r/128) not a
# multiple of 4: the scale rows read one by one, M and N tails).
FP8_CASES = [(4, 8, 4096, 1024), (128, 8, 4096, 1024), (8192, 8, 4096, 1024), (1, 3, 384, 136), (77, 5, 272, 200),
             (300, 16, 1040, 520)]


@pytest.mark.parametrize("b,h,r,d", FP8_CASES)
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32])
def test_fp8_bhr_hdr_bhd(b, h, r, d, dtype):
    x, y, x_deq, y_deq = _fp8_operands(b, h, r, d, seed=b + r + d)
    z = torch.full((b, h, d), float("nan"), device="cuda", dtype=dtype)
    hopgemm.fp8_einsum("bhr,hdr->bhd", x, y, z)
    ref = torch.einsum("bhr,hdr->bhd", x_deq, y_deq)
    _check(z, ref, 1e-2 if dtype == torch.bfloat16 else 2e-3)  # FP8 WGMMA accumulates each 128-K block in ~14 bits


def test_fp8_einsum_torch_op_and_graph():
    x, y, _, _ = _fp8_operands(256, 8, 1024, 512, seed=11)
    z = torch.full((256, 8, 512), float("nan"), device="cuda", dtype=torch.bfloat16)
    hopgemm.fp8_einsum("bhr,hdr->bhd", x, y, z)
    z_op = torch.full_like(z, float("nan"))
    torch.ops.hopgemm.fp8_einsum("bhr,hdr->bhd", x[0], x[1], y[0], y[1], z_op, None, [1, 128, 128])
    z_graph = torch.full_like(z, float("nan"))
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        hopgemm.fp8_einsum("bhr,hdr->bhd", x, y, z_graph)
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(z_op, z) and torch.equal(z_graph, z)
