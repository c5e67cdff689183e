"""Fused FP8 quantisation kernels on the GPU, BIT-EXACT against torch references written as DeepGEMM's
Python helpers (deep_gemm/utils/math.py) and evaluated by torch on the same GPU:

    amax = |x|.float().amax(group).clamp(1e-4);  sf = amax / 448.0  (on CUDA: amax * fl32(1/448));
    ue8m0: sf = ceil_to_ue8m0(sf);  x_fp8 = (x * (1.0 / sf)).to(float8_e4m3fn)

One deliberate difference in the reference: the product is clamped to [-448, 448] before the cast. That is
what cvt.rn.satfinite does (and what torch builds against CUDA >= 13 do); older torch builds turn
|v| > 464 into NaN instead. For finite inputs |x * (1/sf)| <= ~448.0001, so the clamp never changes a
value; it only matters for +-inf inputs with use_ue8m0 (inf * 2^-127 stays inf).

Run: pytest tests/gpu/test_quantize.py  (needs torch with CUDA and the hopgemm package; skips otherwise)."""
import pytest

torch = pytest.importorskip("torch", reason="torch is not installed")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device visible to torch", allow_module_level=True)
hopgemm = pytest.importorskip("hopgemm", reason="the hopgemm package is not installed")
from hopgemm import utils as hutils  # noqa: E402

DTYPES = (torch.bfloat16, torch.float32)


def align(x, y):
    return (x + y - 1) // y * y


def ceil_to_ue8m0(x):
    bits = x.abs().float().view(torch.int32)
    exp = ((bits >> 23) & 0xFF) + (bits & 0x7FFFFF).bool().int()
    return (exp.clamp(1, 254) << 23).view(torch.float32)


def to_e4m3(v):
    return v.clamp(-448.0, 448.0).to(torch.float8_e4m3fn)


def ref_per_token(x, use_ue8m0, gran_k):
    m, n = x.shape
    pn = align(n, gran_k)
    xp = torch.zeros((m, pn), dtype=x.dtype, device=x.device)
    xp[:, :n] = x
    xv = xp.view(m, pn // gran_k, gran_k)
    sf = xv.abs().float().amax(dim=2).clamp(1e-4) / 448.0
    sf = ceil_to_ue8m0(sf) if use_ue8m0 else sf
    q = to_e4m3(xv * (1.0 / sf.unsqueeze(2))).view(m, pn)[:, :n].contiguous()
    return q, sf


def ref_per_block(x, use_ue8m0, gran_k):
    m, n = x.shape
    xp = torch.zeros((align(m, gran_k), align(n, gran_k)), dtype=x.dtype, device=x.device)
    xp[:m, :n] = x
    xv = xp.view(-1, gran_k, xp.size(1) // gran_k, gran_k)
    sf = xv.abs().float().amax(dim=(1, 3), keepdim=True).clamp(1e-4) / 448.0
    sf = ceil_to_ue8m0(sf) if use_ue8m0 else sf
    q = to_e4m3(xv * (1.0 / sf)).view_as(xp)[:m, :n].contiguous()
    return q, sf.view(xv.size(0), xv.size(2))


def ref_per_channel(x, use_ue8m0, gran_k):
    m, n = x.shape
    xv = x.view(-1, gran_k, n) if x.is_contiguous() else x.contiguous().view(-1, gran_k, n)
    sf = xv.abs().float().amax(dim=1).view(-1, n).clamp(1e-4) / 448.0
    sf = ceil_to_ue8m0(sf) if use_ue8m0 else sf
    return to_e4m3(xv * (1.0 / sf.unsqueeze(1))).view(m, n), sf


KINDS = {
    "token": (hutils.per_token_cast_to_fp8, ref_per_token),
    "block": (hutils.per_block_cast_to_fp8, ref_per_block),
    "channel": (hutils.per_channel_cast_to_fp8, ref_per_channel),
}


def assert_bit_exact(got, ref, x):
    q, sf = got
    rq, rsf = ref
    assert q.dtype == torch.float8_e4m3fn and q.shape == rq.shape
    assert sf.dtype == torch.float32 and sf.shape == rsf.shape, (sf.shape, rsf.shape)
    both_nan = sf.isnan() & rsf.isnan()
    sf_ok = both_nan | (sf.view(torch.int32) == rsf.contiguous().view(torch.int32))
    assert bool(sf_ok.all()), f"sf differs at {sf_ok.logical_not().nonzero()[:8].tolist()}"
    diff = q.view(torch.uint8) != rq.view(torch.uint8)
    if bool(diff.any()):
        idx = diff.nonzero()[:8].tolist()
        details = [(i, j, float(x[i, j]), int(q.view(torch.uint8)[i, j]), int(rq.view(torch.uint8)[i, j])) for i, j in idx]
        raise AssertionError(f"x_fp8 differs at (row, col, x, got, ref): {details}")


def run(kind, x, use_ue8m0, gran_k=128):
    fn, ref_fn = KINDS[kind]
    got = fn(x, use_ue8m0=use_ue8m0, gran_k=gran_k)
    assert_bit_exact(got, ref_fn(x, use_ue8m0, gran_k), x)


def randn(m, n, dtype, spread=True):
    x = torch.randn((m, n), dtype=torch.float32, device="cuda")
    if spread:  # magnitudes over many binades, per row
        x = x * torch.pow(2.0, torch.randint(-20, 20, (m, 1), device="cuda").float())
    return x.to(dtype)


SHAPES = [(4096, 7168), (1, 128), (7, 100), (33, 4097), (128, 7296), (129, 257), (65, 1), (3, 8)]
CHANNEL_SHAPES = [(128, 7168), (256, 4097), (384, 100), (128, 1), (4096, 2048)]


@pytest.mark.parametrize("use_ue8m0", [False, True])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("m,n", SHAPES)
@pytest.mark.parametrize("kind", ["token", "block"])
def test_random(kind, m, n, dtype, use_ue8m0):
    torch.manual_seed(m * 7 + n)
    run(kind, randn(m, n, dtype), use_ue8m0)


@pytest.mark.parametrize("use_ue8m0", [False, True])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("m,n", CHANNEL_SHAPES)
def test_random_per_channel(m, n, dtype, use_ue8m0):
    torch.manual_seed(m * 7 + n)
    run("channel", randn(m, n, dtype), use_ue8m0)


@pytest.mark.parametrize("gran_k", [32, 64])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", ["token", "block", "channel"])
def test_other_granularities(kind, dtype, gran_k):
    torch.manual_seed(gran_k)
    m, n = (256, 1000) if kind == "channel" else (129, 1000)
    for use_ue8m0 in (False, True):
        run(kind, randn(m, n, dtype), use_ue8m0, gran_k)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", ["token", "block", "channel"])
def test_special_values(kind, dtype):
    """All-zero groups (amax clamped to 1e-4), tiny and subnormal values, huge finite values, +-inf and NaN
    (NaN propagates through amax: a NaN group quantises to NaN without ue8m0; with ue8m0 the NaN scale
    becomes 2^127)."""
    m, n = 256, 4096 + 64
    big = torch.finfo(dtype).max
    for use_ue8m0 in (False, True):
        x = randn(m, n, dtype)
        x[0:4] = 0                                  # all-zero rows / groups
        x[4, :] = -0.0
        x[5, :200] = 1e-30 if dtype == torch.float32 else 1e-30
        x[6, :] = 1e-41 if dtype == torch.float32 else 1e-39   # subnormal inputs
        x[7, 10] = big
        x[8, 300] = -big
        x[9, :128] = big                          # a whole group at the maximum
        x[10, 5] = float("inf")
        x[11, 7] = float("-inf")
        x[12, 130] = float("nan")
        x[200:256, 1000] = float("nan")            # a NaN column (per channel: one group per block)
        x[13, 3000:3100] = 448.0                   # values already at the e4m3 maximum
        run(kind, x, use_ue8m0)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", ["token", "block", "channel"])
def test_non_contiguous_and_unaligned_input(kind, dtype):
    """Row strides that keep 16-byte alignment, strides that break it, and a base pointer off 16 bytes:
    the kernels switch to element accesses but give the same bits."""
    m, n = 256, 1000
    for extra, offset in ((24, 0), (3, 0), (16, 1)):
        wide = randn(m, n + extra + offset, dtype)
        x = wide[:, offset:offset + n]
        assert not x.is_contiguous()
        fn, ref_fn = KINDS[kind]
        assert_bit_exact(fn(x, use_ue8m0=False), ref_fn(x, False, 128), x)


def test_deterministic():
    x = randn(4096, 7168, torch.bfloat16)
    for kind in KINDS:
        a = KINDS[kind][0](x, use_ue8m0=False)
        b = KINDS[kind][0](x, use_ue8m0=False)
        assert torch.equal(a[0].view(torch.uint8), b[0].view(torch.uint8)) and torch.equal(a[1], b[1])
