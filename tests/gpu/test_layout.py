"""Scale-factor layout transforms on the GPU, against torch references: values and strides must match
EXACTLY (as DeepGEMM's own layout tests do: exact equality and exact strides).

Run: pytest tests/gpu/test_layout.py  (needs torch with CUDA and the hopgemm package; skips otherwise)."""
import random

import pytest

torch = pytest.importorskip("torch", reason="torch is not installed")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device visible to torch", allow_module_level=True)
hopgemm = pytest.importorskip("hopgemm", reason="the hopgemm package is not installed")

MNS = (4096, 4097, 8192, 1, 3, 65)
KS = (128, 7168, 7296)            # sf_k = 1, 56, 57
GROUPS = (1, 2, 4)


def ceil_div(x, y):
    return (x + y - 1) // y


def tma_aligned(mn, element_size):
    a = 16 // element_size
    return ceil_div(mn, a) * a


def ceil_to_ue8m0(x):
    bits = x.abs().float().view(torch.int32)
    exp = ((bits >> 23) & 0xFF) + (bits & 0x7FFFFF).bool().int()
    return (exp.clamp(1, 254) << 23).view(torch.float32)


def ref_mn_major(sf):
    """sf copied into empty_strided with the MN-major TMA-aligned strides."""
    x = sf if sf.dim() == 3 else sf.unsqueeze(0)
    g, mn, k = x.shape
    t = tma_aligned(mn, 4)
    out = torch.empty_strided((g, mn, k), (t * k, 1, t), dtype=sf.dtype, device=sf.device)
    out.copy_(x)
    return out if sf.dim() == 3 else out.squeeze(0)


def ref_packed_ue8m0(sf):
    """DeepGEMM's torch reference: exponent byte of each FP32 scale, zero-padded to a multiple of 4 along K,
    4 bytes per int32 (byte j = scale 4c + j), MN-major TMA-aligned."""
    x = sf if sf.dim() == 3 else sf.unsqueeze(0)
    g, mn, k = x.shape
    exp = ((x.contiguous().view(torch.int32) >> 23) & 0xFF).to(torch.uint8)
    am, ak = tma_aligned(mn, 4), ceil_div(k, 4) * 4
    padded = torch.zeros((g, am, ak), dtype=torch.uint8, device=sf.device)
    padded[:, :mn, :k] = exp
    packed = padded.view(torch.int32)  # [g, am, ak / 4], little-endian: byte j -> bits 8j
    out = torch.empty_strided((g, mn, ak // 4), (am * (ak // 4), 1, am), dtype=torch.int32, device=sf.device)
    out.copy_(packed[:, :mn])
    return out if sf.dim() == 3 else out.squeeze(0)


def make_sf(g, mn, sf_k, mn_major_input, ue8m0=False):
    shape = (mn, sf_k) if g == 1 else (g, mn, sf_k)
    sf = torch.rand(shape, dtype=torch.float32, device="cuda") * 10 + 1e-3
    if ue8m0:
        sf = ceil_to_ue8m0(sf)
    if mn_major_input:  # MN-major but not padded (what x.T.contiguous().T gives)
        sf = sf.transpose(-1, -2).contiguous().transpose(-1, -2)
    return sf


def assert_same(out, ref):
    assert out.shape == ref.shape, (out.shape, ref.shape)
    assert out.stride() == ref.stride(), (out.stride(), ref.stride())
    assert out.dtype == ref.dtype
    assert torch.equal(out, ref)


@pytest.mark.parametrize("mn_major_input", [False, True])
@pytest.mark.parametrize("g", GROUPS)
@pytest.mark.parametrize("k", KS)
@pytest.mark.parametrize("mn", MNS)
def test_mn_major_tma_aligned(mn, k, g, mn_major_input):
    sf = make_sf(g, mn, ceil_div(k, 128), mn_major_input)
    out = hopgemm.get_mn_major_tma_aligned_tensor(sf)
    assert_same(out, ref_mn_major(sf))
    assert torch.equal(out, sf)
    if hopgemm_is_aligned(sf):  # already in the layout: returned unchanged, like DeepGEMM
        assert out.data_ptr() == sf.data_ptr()


def hopgemm_is_aligned(sf):
    t = tma_aligned(sf.size(-2), 4)
    return ((sf.dim() == 2 or sf.stride(0) == t * sf.size(-1)) and sf.stride(-2) == 1 and sf.stride(-1) == t)


@pytest.mark.parametrize("g", GROUPS)
@pytest.mark.parametrize("mn", (65, 4097))
def test_mn_major_tma_aligned_strided_input(mn, g):
    # Neither K- nor MN-contiguous: every other column of a wider tensor, and a transposed-group view.
    wide = torch.rand((g, mn, 2 * 57), dtype=torch.float32, device="cuda")
    sf = wide[..., ::2]
    assert_same(hopgemm.get_mn_major_tma_aligned_tensor(sf), ref_mn_major(sf))
    sf = torch.rand((mn, g, 57), dtype=torch.float32, device="cuda").transpose(0, 1)
    assert_same(hopgemm.get_mn_major_tma_aligned_tensor(sf), ref_mn_major(sf))


@pytest.mark.parametrize("mn_major_input", [False, True])
@pytest.mark.parametrize("g", GROUPS)
@pytest.mark.parametrize("k", KS + (128 * 5, 128 * 130))   # sf_k % 4 == 1 .. 2, and > 128 (several K tiles)
@pytest.mark.parametrize("mn", MNS)
def test_packed_ue8m0(mn, k, g, mn_major_input):
    sf = make_sf(g, mn, ceil_div(k, 128), mn_major_input, ue8m0=True)
    assert_same(hopgemm.get_mn_major_tma_aligned_packed_ue8m0_tensor(sf), ref_packed_ue8m0(sf))


def test_packed_ue8m0_keeps_exponent_of_non_powers_of_two():
    # Documented semantics: the exponent byte, no rounding (DeepGEMM's reference).
    sf = torch.rand((65, 57), dtype=torch.float32, device="cuda") * 100 + 1e-3
    assert_same(hopgemm.get_mn_major_tma_aligned_packed_ue8m0_tensor(sf), ref_packed_ue8m0(sf))


def make_ks(num_groups, avg_k, with_empty):
    ks = [max(0, int(avg_k * random.uniform(0.7, 1.3)) // 128 * 128) for _ in range(num_groups)]
    if with_empty:
        ks[random.randrange(num_groups)] = 0
    return ks


def ref_k_grouped(sf, ks, gran_k=128):
    parts, start = [], 0
    for k in ks:
        sf_k = ceil_div(k, gran_k)
        if sf_k:
            parts.append(ref_packed_ue8m0(sf[start:start + sf_k].T).T)
        start += sf_k
    if not parts:
        return torch.empty((0, sf.size(1)), dtype=torch.int32, device=sf.device)
    return torch.cat(parts)


@pytest.mark.parametrize("with_empty", [False, True])
@pytest.mark.parametrize("num_groups,avg_k", [(16, 2048), (8, 4096), (72, 384), (128, 256), (300, 256), (1, 128)])
@pytest.mark.parametrize("mn", (4096, 7168, 98))   # 98: mn % 4 != 0 (DeepGEMM asserts; we support it)
def test_k_grouped_packed_ue8m0(mn, num_groups, avg_k, with_empty):
    random.seed(mn * 1000 + num_groups)
    ks = make_ks(num_groups, avg_k, with_empty)
    sum_sf_k = sum(ceil_div(k, 128) for k in ks)
    sf = ceil_to_ue8m0(torch.rand((sum_sf_k, mn), dtype=torch.float32, device="cuda") + 0.5)
    ks_tensor = torch.tensor(ks, dtype=torch.int32, device="cuda")
    out = hopgemm.get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor(sf, ks_tensor, ks, 128, 128)
    ref = ref_k_grouped(sf, ks)
    assert out.shape == (sum(ceil_div(k, 512) for k in ks), mn)
    assert out.is_contiguous()
    assert torch.equal(out, ref)


def test_k_grouped_from_per_channel_cast():
    # The real pipeline: per-channel UE8M0 quantisation of a K-grouped operand, then packing.
    ks = [256, 640, 0, 1024]
    x = torch.randn((sum(ks), 4096), dtype=torch.bfloat16, device="cuda")
    _, sf = hopgemm.utils.per_channel_cast_to_fp8(x, use_ue8m0=True)
    ks_tensor = torch.tensor(ks, dtype=torch.int32, device="cuda")
    out = hopgemm.get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor(sf, ks_tensor, ks, 128, 128)
    assert torch.equal(out, ref_k_grouped(sf, ks))


def test_k_grouped_gran_k_32():
    # DeepGEMM's SM100 granularity: one scale per 32 K, ceil(k / 128) packed rows per group (k need not be aligned).
    ks = [96, 0, 320, 32, 1000]
    sf = ceil_to_ue8m0(torch.rand((sum(ceil_div(k, 32) for k in ks), 520), device="cuda") + 0.5)
    ks_tensor = torch.tensor(ks, dtype=torch.int32, device="cuda")
    out = hopgemm.get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor(sf, ks_tensor, ks, 32, 32)
    assert out.shape == (sum(ceil_div(k, 128) for k in ks), 520)
    assert torch.equal(out, ref_k_grouped(sf, ks, gran_k=32))


# ---- transform_sf_into_required_layout (SM90 recipes) ------------------------------------------------------

@pytest.mark.parametrize("g", (None, 2))
@pytest.mark.parametrize("mn", (4096, 4097, 1))
def test_transform_per_token_sfa(mn, g):
    k = 7168
    shape = (mn, ceil_div(k, 128)) if g is None else (g, mn, ceil_div(k, 128))
    sf = torch.rand(shape, dtype=torch.float32, device="cuda")
    out = hopgemm.transform_sf_into_required_layout(sf, mn, k, (1, 128, 128), g, True)
    assert_same(out, ref_mn_major(sf))
    again = hopgemm.transform_sf_into_required_layout(out, mn, k, (1, 128, 128), g, True)
    assert again.data_ptr() == out.data_ptr()
    # 2-tuple recipe (gran_mn, gran_k), and the 1D1D SFB (1, 1, 128) with is_sfa=False.
    assert_same(hopgemm.transform_sf_into_required_layout(sf, mn, k, (1, 128), g), ref_mn_major(sf))
    assert_same(hopgemm.transform_sf_into_required_layout(sf, mn, k, (1, 1, 128), g, False), ref_mn_major(sf))


def test_transform_block_sfb_is_returned_unchanged():
    n, k = 7168, 7296
    sfb = torch.rand((ceil_div(n, 128), ceil_div(k, 128)), dtype=torch.float32, device="cuda")
    out = hopgemm.transform_sf_into_required_layout(sfb, n, k, (1, 128, 128), None, False)
    assert out.data_ptr() == sfb.data_ptr() and out.stride() == sfb.stride()
    mn_major = sfb.T.contiguous().T
    assert hopgemm.transform_sf_into_required_layout(mn_major, n, k, (1, 128, 128), None, False).data_ptr() == \
        mn_major.data_ptr()
    with pytest.raises(Exception, match="transform_sf_into_required_layout"):
        hopgemm.transform_sf_into_required_layout(sfb[:, :-1], n, k - 128, (1, 128, 128), None, False)


def test_transform_rejects_bad_shapes_and_recipes():
    sf = torch.rand((4096, 56), dtype=torch.float32, device="cuda")
    with pytest.raises(Exception, match="transform_sf_into_required_layout"):
        hopgemm.transform_sf_into_required_layout(sf, 4096, 7296, (1, 128, 128), None, True)   # sf_k mismatch
    with pytest.raises(Exception, match="(?i)unknown SF transformation"):
        hopgemm.transform_sf_into_required_layout(sf, 4096, 56 * 64, (1, 64))
