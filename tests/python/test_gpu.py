"""GPU checks of the Python layer (quantisers, layout helpers, streams). Skipped without torch and a CUDA device; run
on the H100 machine. The per-call host cost is measured by bench/host_cost.py, not here."""
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

import hopgemm  # noqa: E402
from hopgemm import _C  # noqa: E402
from hopgemm.testing import assert_fp8_gemm_close, calc_diff, fp8_gemm_inputs  # noqa: E402
from hopgemm.utils import align, ceil_div, ceil_to_ue8m0  # noqa: E402


def _reference_cast(x_view, amax_dims, use_ue8m0):
    amax = x_view.abs().float().amax(dim=amax_dims, keepdim=True).clamp(1e-4)
    sf = amax / 448.0
    if use_ue8m0:
        sf = ceil_to_ue8m0(sf)
    return (x_view * (1.0 / sf)).to(torch.float8_e4m3fn), sf


def reference_per_token(x, use_ue8m0, gran_k):
    m, n = x.shape
    padded = torch.zeros(m, align(n, gran_k), dtype=x.dtype, device=x.device)
    padded[:, :n] = x
    q, sf = _reference_cast(padded.view(m, -1, gran_k), (2,), use_ue8m0)
    return q.view(m, -1)[:, :n].contiguous(), sf.view(m, -1)


def reference_per_block(x, use_ue8m0, gran_k):
    m, n = x.shape
    padded = torch.zeros(align(m, gran_k), align(n, gran_k), dtype=x.dtype, device=x.device)
    padded[:m, :n] = x
    view = padded.view(-1, gran_k, padded.size(1) // gran_k, gran_k)
    q, sf = _reference_cast(view, (1, 3), use_ue8m0)
    return q.view_as(padded)[:m, :n].contiguous(), sf.view(view.size(0), view.size(2))


def reference_per_channel(x, use_ue8m0, gran_k):
    m, n = x.shape
    q, sf = _reference_cast(x.view(m // gran_k, gran_k, n), (1,), use_ue8m0)
    return q.view(m, n), sf.view(m // gran_k, n)


def _check_cast(fn, reference, x, use_ue8m0, gran_k):
    q, sf = fn(x, use_ue8m0=use_ue8m0, gran_k=gran_k)
    q_ref, sf_ref = reference(x, use_ue8m0, gran_k)
    assert q.dtype == torch.float8_e4m3fn and q.shape == x.shape and q.device == x.device
    assert sf.dtype == torch.float32 and sf.shape == sf_ref.shape
    torch.testing.assert_close(sf, sf_ref, rtol=0, atol=0)
    mismatch = (q.view(torch.uint8) != q_ref.view(torch.uint8)).float().mean().item()
    assert mismatch < 1e-3, f"{mismatch:.2e} of the e4m3 values differ from the reference"
    assert calc_diff(q.float(), q_ref.float()) < 1e-6


@pytest.mark.parametrize("shape", [(128, 512), (7, 300), (129, 4096)])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32])
@pytest.mark.parametrize("use_ue8m0", [False, True])
def test_per_token_and_per_block(shape, dtype, use_ue8m0):
    x = torch.randn(shape, dtype=dtype, device="cuda") * 3
    _check_cast(hopgemm.per_token_cast_to_fp8, reference_per_token, x, use_ue8m0, 128)
    _check_cast(hopgemm.per_block_cast_to_fp8, reference_per_block, x, use_ue8m0, 128)


@pytest.mark.parametrize("use_ue8m0", [False, True])
def test_per_channel(use_ue8m0):
    x = torch.randn(256, 300, dtype=torch.bfloat16, device="cuda")
    _check_cast(hopgemm.per_channel_cast_to_fp8, reference_per_channel, x, use_ue8m0, 128)


@pytest.mark.parametrize("shape", [(128, 4), (133, 7), (3, 255, 33)])
def test_mn_major_tma_aligned_tensor(shape):
    sf = torch.randn(shape, device="cuda")
    out = hopgemm.get_mn_major_tma_aligned_tensor(sf)
    mn, k = shape[-2], shape[-1]
    tma_mn = hopgemm.get_tma_aligned_size(mn, 4)
    expected_strides = (1, tma_mn) if len(shape) == 2 else (tma_mn * k, 1, tma_mn)
    assert out.stride() == expected_strides and out.shape == sf.shape
    assert torch.equal(out, sf)
    # Already aligned: returned as is.
    assert hopgemm.get_mn_major_tma_aligned_tensor(out) is out
    # Non-contiguous input.
    view = torch.randn(shape[:-1] + (2 * k,), device="cuda")[..., ::2]
    assert torch.equal(hopgemm.get_mn_major_tma_aligned_tensor(view), view)


def test_transform_sf_into_required_layout():
    m, n, k = 200, 384, 512
    sfa = torch.randn(m, k // 128, device="cuda")
    out = hopgemm.transform_sf_into_required_layout(sfa, m, k, (1, 128, 128), is_sfa=True)
    assert out.stride() == (1, hopgemm.get_tma_aligned_size(m, 4)) and torch.equal(out, sfa)
    sfb = torch.randn(n // 128, k // 128, device="cuda")
    assert hopgemm.transform_sf_into_required_layout(sfb, n, k, (1, 128, 128), is_sfa=False) is sfb
    with pytest.raises(ValueError, match="shape"):
        hopgemm.transform_sf_into_required_layout(sfb, n, 2 * k, (1, 128, 128), is_sfa=False)


def test_explicit_stream():
    x = torch.randn(256, 1024, dtype=torch.bfloat16, device="cuda")
    q_ref, sf_ref = hopgemm.per_token_cast_to_fp8(x)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    q = torch.empty_like(q_ref)
    sf = torch.empty_like(sf_ref)
    for stream in (side, side.cuda_stream):
        q.view(torch.uint8).zero_(), sf.zero_()
        torch.cuda.synchronize()
        _C.per_token_cast_to_fp8(x, q, sf, stream=stream)
        side.synchronize()
        assert torch.equal(q.view(torch.uint8), q_ref.view(torch.uint8)) and torch.equal(sf, sf_ref)
    with torch.cuda.stream(side):  # the default is torch's current stream
        q2, sf2 = hopgemm.per_token_cast_to_fp8(x)
    side.synchronize()
    assert torch.equal(sf2, sf_ref)


def test_host_tensor_rejected():
    with pytest.raises(ValueError, match="argument 'x' is in host memory"):
        hopgemm.per_token_cast_to_fp8(torch.randn(128, 128))


def test_import_does_not_initialise_cuda():
    code = "import torch, hopgemm\nassert not torch.cuda.is_initialized()\n"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("m, n, k", [(1, 2112, 7168), (129, 7168, 2048), (4096, 4096, 512)])
def test_fp8_gemm_nt(m, n, k):
    a8, sfa, b8, sfb = fp8_gemm_inputs(m, n, k, seed=m)
    d = torch.full((m, n), float("nan"), dtype=torch.bfloat16, device="cuda")
    hopgemm.fp8_gemm_nt((a8, sfa), (b8, sfb), d)
    ref = assert_fp8_gemm_close(d, a8, sfa, b8, sfb, 128)  # every element written and within its own bound
    assert calc_diff(d, ref) < 1e-3


def test_cupy_arrays():
    cupy = pytest.importorskip("cupy")
    x = cupy.random.standard_normal((64, 256), dtype=cupy.float32)
    q, sf = hopgemm.per_token_cast_to_fp8(x)
    assert isinstance(q, cupy.ndarray) and q.dtype == cupy.uint8 and isinstance(sf, cupy.ndarray)
    q_ref, sf_ref = hopgemm.per_token_cast_to_fp8(torch.from_dlpack(x))
    assert torch.equal(torch.from_dlpack(sf), sf_ref)
    assert torch.equal(torch.from_dlpack(q), q_ref.view(torch.uint8))
