"""The DeepSeek-V3.2 indexer ops on the GPU (fp8_mqa_logits, get_paged_mqa_logits_metadata, fp8_paged_mqa_logits)
against a float64 reference of the dequantised FP8 inputs (calc_diff < 5e-6 FP32 logits, < 3e-5 BF16: DeepGEMM's
FP8-simulated thresholds) and of the unquantised BF16 inputs (< 1e-3); the -inf mask exact; outputs poisoned with NaN
so that every column the op must write is checked and every column it must not write (padding, untouched ranges)
stays NaN; 20 reruns bitwise identical; ragged, empty and length-1 ranges; context-parallel masks; -1 blocks; heads
32/64/128, head dim 32/64/128, next_n 1-4; 1-D and 2-D context lengths with clean_logits; CUDA graph replay with new
context lengths. Run: pytest tests/gpu/test_mqa_logits.py (skips without a GPU)."""
import pytest

torch = pytest.importorskip("torch", reason="torch is not installed")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device visible to torch", allow_module_level=True)
hopgemm = pytest.importorskip("hopgemm", reason="the hopgemm package is not installed")
from hopgemm import _C  # noqa: E402
from hopgemm.testing import calc_diff  # noqa: E402

NEG_INF = float("-inf")


def tol(bf16):
    return 3e-5 if bf16 else 5e-6


def quant_rows(x):
    """Per-row FP8 (one FP32 scale per token, amax / 448): DeepGEMM's per_custom_dims_cast_to_fp8(x, (0,))."""
    sf = x.float().abs().amax(dim=-1).clamp(1e-4) / 448.0
    return (x.float() / sf[..., None]).to(torch.float8_e4m3fn), sf


# ---- prefill -----------------------------------------------------------------------------------------------------------

def make_prefill(s, s_kv, h, d, seed=0):
    g = torch.Generator(device="cuda").manual_seed(seed)
    q_bf = torch.randn(s, h, d, device="cuda", generator=g).bfloat16()
    kv_bf = torch.randn(s_kv, d, device="cuda", generator=g).bfloat16()
    w = torch.randn(s, h, device="cuda", generator=g)
    kv, sf = quant_rows(kv_bf)
    return q_bf, kv_bf, q_bf.to(torch.float8_e4m3fn), kv, sf, w


def ref_prefill(q, kv, w):
    """float64 [S, S_kv]: sum_h relu(q[i, h] . kv[j]) * w[i, h] (q, kv already dequantised, any float dtype)."""
    q, kv, w = q.double(), kv.double(), w.double()
    out = torch.empty(q.shape[0], kv.shape[0], dtype=torch.float64, device="cuda")
    for i in range(0, q.shape[0], 16):
        s = torch.einsum("shd,kd->shk", q[i:i + 16], kv).relu_()
        out[i:i + 16] = (s * w[i:i + 16, :, None]).sum(1)
    return out


def ranges_causal(s, s_kv):
    ks = torch.zeros(s, dtype=torch.int32, device="cuda")
    ke = (torch.arange(s, device="cuda") + (s_kv - s) + 1).clamp(max=s_kv).int()
    return ks, ke


def ranges_cp(s, s_kv):
    """DeepGEMM's context-parallel pattern (tests/test_attention.py): two chunks of one rank's queries."""
    chunk, cp_size = s // 2, s_kv // s
    cp_id = cp_size // 3
    ks = torch.zeros(s, dtype=torch.int32, device="cuda")
    ke = torch.zeros(s, dtype=torch.int32, device="cuda")
    for i in range(chunk):
        ke[i] = cp_id * chunk + i
        ke[i + chunk] = (cp_size * 2 - 1 - cp_id) * chunk + i
    return ks, ke


def ranges_ragged(s, s_kv, seed=1):
    g = torch.Generator(device="cuda").manual_seed(seed)
    a = torch.randint(-5, s_kv + 5, (s,), device="cuda", generator=g)
    b = torch.randint(-5, s_kv + 5, (s,), device="cuda", generator=g)
    ks, ke = torch.minimum(a, b).int(), torch.maximum(a, b).int()
    ke[::7] = ks[::7]          # empty ranges
    ke[1::11] = ks[1::11] + 1  # length 1
    return ks, ke


def poisoned(rows, cols, stride, dtype):
    buf = torch.full((rows, stride), float("nan"), dtype=dtype, device="cuda")
    return buf, buf[:, :cols]


def run_prefill(q, kv, sf, w, ks, ke, clean, max_seqlen_k, dtype):
    s, s_kv = q.shape[0], kv.shape[0]
    cols = max_seqlen_k if max_seqlen_k else s_kv
    buf, view = poisoned(s, cols, _C.mqa_logits_row_stride(cols + 256, dtype == torch.bfloat16), dtype)
    _C.fp8_mqa_logits(q, kv, sf, w, ks, ke, view, clean, max_seqlen_k)
    return buf, view


def check_prefill(q_bf, kv_bf, q, kv, sf, w, ks, ke, dtype=torch.float32, clean=True):
    s, s_kv = q.shape[0], kv.shape[0]
    buf, out = run_prefill(q, kv, sf, w, ks, ke, clean, 0, dtype)
    cols = torch.arange(s_kv, device="cuda")
    kss, kee = ks.long().clamp(0, s_kv), ke.long().clamp(0, s_kv)
    valid = (cols[None, :] >= kss[:, None]) & (cols[None, :] < kee[:, None])
    assert torch.isnan(buf[:, s_kv:].float()).all(), "a column past the view was written"
    got = out.double()
    if clean:
        assert not torch.isnan(got).any(), "clean_logits left a column unwritten"
        assert torch.equal(got == NEG_INF, ~valid), "-inf mask differs"
    else:
        assert not torch.isnan(got[valid]).any(), "a valid logit was not written"
    simulated = ref_prefill(q.double(), kv.double() * sf.double()[:, None], w)
    bf16_ref = ref_prefill(q_bf, kv_bf, w)
    z = torch.zeros_like(got)
    got_v, sim_v, bf_v = torch.where(valid, got, z), torch.where(valid, simulated, z), torch.where(valid, bf16_ref, z)
    assert calc_diff(got_v, sim_v) < tol(dtype == torch.bfloat16)
    assert calc_diff(got_v, bf_v) < 1e-3
    return buf


@pytest.mark.parametrize("h", [32, 64, 128])
@pytest.mark.parametrize("d", [32, 64, 128])
def test_prefill_heads_and_dims(h, d):
    q_bf, kv_bf, q, kv, sf, w = make_prefill(67, 1000, h, d, seed=h + d)
    check_prefill(q_bf, kv_bf, q, kv, sf, w, *ranges_causal(67, 1000))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("pattern", ["causal", "cp", "ragged"])
def test_prefill_patterns(dtype, pattern):
    s, s_kv = 256, 2048
    q_bf, kv_bf, q, kv, sf, w = make_prefill(s, s_kv, 64, 128, seed=3)
    ks, ke = {"causal": ranges_causal, "cp": ranges_cp, "ragged": ranges_ragged}[pattern](s, s_kv)
    check_prefill(q_bf, kv_bf, q, kv, sf, w, ks, ke, dtype)


def test_prefill_without_clean_leaves_outside_untouched():
    s, s_kv = 96, 3000
    q_bf, kv_bf, q, kv, sf, w = make_prefill(s, s_kv, 32, 64, seed=5)
    ks = torch.full((s,), 1000, dtype=torch.int32, device="cuda")
    ke = torch.full((s,), 1500, dtype=torch.int32, device="cuda")
    buf = check_prefill(q_bf, kv_bf, q, kv, sf, w, ks, ke, clean=False)
    # The union range of every query block is [1000, 1500): columns before 1000 and from 1500 + 256 on are untouched.
    assert torch.isnan(buf[:, :1000]).all() and torch.isnan(buf[:, 1756:3000]).all()


def test_prefill_compressed():
    s, s_kv, max_k = 128, 4096, 700
    q_bf, kv_bf, q, kv, sf, w = make_prefill(s, s_kv, 64, 128, seed=6)
    g = torch.Generator(device="cuda").manual_seed(9)
    ks = torch.randint(0, s_kv - max_k, (s,), device="cuda", generator=g).int()
    ke = (ks + torch.randint(0, max_k + 1, (s,), device="cuda", generator=g)).int()
    buf, out = run_prefill(q, kv, sf, w, ks, ke, False, max_k, torch.float32)
    simulated = ref_prefill(q.double(), kv.double() * sf.double()[:, None], w)
    expect = torch.full((s, max_k), float("nan"), dtype=torch.float64, device="cuda")
    for i in range(s):
        n = int(ke[i] - ks[i])
        expect[i, :n] = simulated[i, int(ks[i]):int(ke[i])]
    written = ~torch.isnan(out)
    assert torch.equal(written, ~torch.isnan(expect)), "compressed: wrong set of columns written"
    z = torch.zeros_like(expect)
    assert calc_diff(torch.where(written, out.double(), z), torch.where(written, expect, z)) < tol(False)


def test_prefill_python_api_and_determinism():
    s, s_kv = 200, 5000
    q_bf, kv_bf, q, kv, sf, w = make_prefill(s, s_kv, 64, 128, seed=7)
    ks, ke = ranges_ragged(s, s_kv)
    for name in ("fp8_mqa_logits", "fp8_fp4_mqa_logits"):
        first = getattr(hopgemm, name)(q if name == "fp8_mqa_logits" else (q, None), (kv, sf), w, ks, ke)
        assert first.shape == (s, s_kv) and first.dtype == torch.float32
        assert first.stride(0) * 4 % 1024 == 0
        for _ in range(20):
            again = getattr(hopgemm, name)(q, (kv, sf), w, ks, ke)
            assert torch.equal(again.view(torch.int32), first.view(torch.int32))
    bf = hopgemm.fp8_fp4_mqa_logits((q, None), (kv, sf), w, ks, ke, logits_dtype=torch.bfloat16)
    assert bf.dtype == torch.bfloat16 and torch.equal(torch.isinf(bf), torch.isinf(first))


def test_prefill_tiny_and_empty():
    for s, s_kv in [(1, 1), (1, 5), (3, 300), (5, 0)]:
        q_bf, kv_bf, q, kv, sf, w = make_prefill(s, max(s_kv, 1), 64, 128, seed=s)
        kv, sf, kv_bf = kv[:s_kv], sf[:s_kv], kv_bf[:s_kv]
        ks = torch.zeros(s, dtype=torch.int32, device="cuda")
        ke = torch.full((s,), s_kv, dtype=torch.int32, device="cuda")
        out = hopgemm.fp8_mqa_logits(q, (kv, sf), w, ks, ke)
        assert out.shape == (s, s_kv)
        if s_kv:
            simulated = ref_prefill(q.double(), kv.double() * sf.double()[:, None], w)
            assert calc_diff(out.double(), simulated) < tol(False)


def test_prefill_bad_inputs_raise_and_write_nothing():
    q_bf, kv_bf, q, kv, sf, w = make_prefill(8, 64, 64, 128)
    ks, ke = ranges_causal(8, 64)
    buf, view = poisoned(8, 64, 256, torch.float32)
    with pytest.raises(ValueError, match="clean_logits"):
        _C.fp8_mqa_logits(q, kv, sf, w, ks, ke, view[:, :32], True, 32)
    with pytest.raises(ValueError, match="q"):
        _C.fp8_mqa_logits(q.view(torch.uint8).to(torch.float16), kv, sf, w, ks, ke, view, True, 0)
    with pytest.raises(NotImplementedError, match="SM100"):  # int8 is DeepGEMM's packed FP4: Blackwell only
        _C.fp8_mqa_logits(q.view(torch.int8), kv, sf, w, ks, ke, view, True, 0)
    with pytest.raises(NotImplementedError, match="heads"):
        hopgemm.fp8_mqa_logits(q[:, :16].contiguous(), (kv, sf), w[:, :16].contiguous(), ks, ke)
    torch.cuda.synchronize()
    assert torch.isnan(buf).all()


# ---- paged -------------------------------------------------------------------------------------------------------------

def make_paged(batch, next_n, h, d, avg, lens_2d, seed=0, holes=False):
    g = torch.Generator(device="cuda").manual_seed(seed)
    ctx = torch.randint(max(int(0.7 * avg), 1), int(1.3 * avg) + 2, (batch,), device="cuda", generator=g).int()
    ctx[0] = 0 if batch > 2 else ctx[0]
    if batch > 3:
        ctx[1] = 1
    max_len = int(ctx.max()) + next_n
    blocks_per = (ctx + 63) // 64
    max_blocks = max(int(blocks_per.max()), 1)
    num_blocks = int(blocks_per.sum()) + 3
    kv_bf = torch.randn(num_blocks, 64, d, device="cuda", generator=g).bfloat16()
    kv, sf = quant_rows(kv_bf)
    cache = torch.cat([kv.view(torch.uint8).reshape(num_blocks, 64 * d), sf.view(torch.uint8).reshape(num_blocks, 256)],
                      dim=1).view(num_blocks, 64, 1, d + 4)
    perm = torch.randperm(num_blocks, device="cuda", generator=g).int()
    table = torch.full((batch, max_blocks), -1, dtype=torch.int32, device="cuda")
    offset = 0
    for b, n in enumerate(blocks_per.tolist()):
        table[b, :n] = perm[offset:offset + n]
        offset += n
    if holes:
        table[:, 1::3] = -1
    q_bf = torch.randn(batch, next_n, h, d, device="cuda", generator=g).bfloat16()
    w = torch.randn(batch * next_n, h, device="cuda", generator=g)
    if lens_2d:
        lens = ((ctx[:, None] + 1) * torch.rand(batch, next_n, device="cuda", generator=g)).int()
        lens[:, -1] = ctx
        lens = lens.contiguous()
    else:
        lens = ctx
    return dict(q_bf=q_bf, q=q_bf.to(torch.float8_e4m3fn), kv=kv, sf=sf, cache=cache, w=w, table=table, lens=lens,
                max_len=max_len)


def token_lens(lens, next_n):
    if lens.dim() == 2:
        return lens.clamp(min=0).long()
    t = torch.arange(next_n, device="cuda")
    return (lens[:, None].long() - next_n + t[None, :] + 1).clamp(min=0)


def ref_paged(c, next_n):
    """float64 [B * next_n, max_len] over the dequantised cache; NaN where a query may not look."""
    batch, _, h, d = c["q"].shape
    tl = token_lens(c["lens"], next_n)
    out = torch.full((batch * next_n, c["max_len"]), float("nan"), dtype=torch.float64, device="cuda")
    kv = c["kv"].double() * c["sf"].double()[..., None]
    q = c["q"].double()
    for b in range(batch):
        n = int(tl[b].max())
        if n == 0:
            continue
        blocks = c["table"][b, :(n + 63) // 64].long()
        good = blocks >= 0
        k = kv[blocks.clamp(min=0)]  # [nb, 64, d]
        k[~good] = float("nan")
        k = k.reshape(-1, d)[:n]
        s = torch.einsum("thd,kd->thk", q[b], k).relu_()
        logit = (s * c["w"][b * next_n:(b + 1) * next_n].double()[:, :, None]).sum(1)  # [next_n, n]
        for t in range(next_n):
            m = int(tl[b, t])
            out[b * next_n + t, :m] = logit[t, :m]
    return out


def run_paged(c, next_n, clean, dtype=torch.float32, num_sms=None):
    num_sms = num_sms or hopgemm.get_num_sms()
    meta = hopgemm.get_paged_mqa_logits_metadata(c["lens"], 64, num_sms)
    rows = c["q"].shape[0] * next_n
    buf, view = poisoned(rows, c["max_len"], _C.mqa_logits_row_stride(c["max_len"] + 256, dtype == torch.bfloat16),
                         dtype)
    _C.fp8_paged_mqa_logits(c["q"], c["cache"], c["w"], c["lens"], c["table"], meta, view, clean)
    return buf, view, meta


def check_paged(c, next_n, clean, dtype=torch.float32):
    buf, out, _ = run_paged(c, next_n, clean, dtype)
    ref = ref_paged(c, next_n)
    valid = ~torch.isnan(ref)  # visible and not in an empty (-1) block
    got = out.double()
    assert torch.isnan(buf[:, c["max_len"]:].float()).all(), "a column past the view was written"
    if clean:
        assert not torch.isnan(got).any(), "clean_logits left a column unwritten"
        assert torch.equal(got == NEG_INF, ~valid), "-inf mask differs"
    z = torch.zeros_like(got)
    assert not torch.isnan(got[valid]).any()
    assert calc_diff(torch.where(valid, got, z), torch.where(valid, ref, z)) < tol(dtype == torch.bfloat16)
    return buf, out


@pytest.mark.parametrize("next_n", [1, 2, 3, 4])
@pytest.mark.parametrize("h", [32, 64, 128])
def test_paged_heads_next_n(next_n, h):
    c = make_paged(9, next_n, h, 128, 700, lens_2d=True, seed=next_n * h)
    check_paged(c, next_n, clean=True)


@pytest.mark.parametrize("d", [32, 64])
@pytest.mark.parametrize("lens_2d", [False, True])
def test_paged_dims_and_lens(d, lens_2d):
    c = make_paged(17, 2, 64, d, 1500, lens_2d=lens_2d, seed=d)
    check_paged(c, 2, clean=True)
    check_paged(c, 2, clean=False)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_paged_deepseek_shape_and_determinism(dtype):
    c = make_paged(64, 2, 64, 128, 4000, lens_2d=True, seed=11)
    buf, out = check_paged(c, 2, clean=True, dtype=dtype)
    for _ in range(20):
        _, again, _ = run_paged(c, 2, True, dtype)
        assert torch.equal(again.view(torch.int16 if dtype == torch.bfloat16 else torch.int32),
                           out.view(torch.int16 if dtype == torch.bfloat16 else torch.int32))


def test_paged_empty_blocks_are_neg_inf():
    c = make_paged(8, 1, 64, 128, 900, lens_2d=False, seed=12, holes=True)
    _, out, _ = run_paged(c, 1, clean=False)
    ref = ref_paged(c, 1)  # NaN in the -1 blocks' tokens (the reference's K there is NaN)
    tl = token_lens(c["lens"], 1).reshape(-1)
    cols = torch.arange(c["max_len"], device="cuda")
    visible = cols[None, :] < tl[:, None]
    hole = visible & torch.isnan(ref)
    assert hole.any()
    assert (out[hole] == NEG_INF).all()
    good = visible & ~hole
    z = torch.zeros(out.shape, dtype=torch.float64, device="cuda")
    assert calc_diff(torch.where(good, out.double(), z), torch.where(good, ref, z)) < tol(False)


def test_paged_metadata_matches_reference():
    for batch, num_sms, lens_2d in [(1, 132, False), (37, 132, True), (4096, 132, True), (300, 7, False), (0, 132, False)]:
        c_lens = torch.randint(0, 20000, (batch, 2) if lens_2d else (batch,), dtype=torch.int32, device="cuda")
        meta = hopgemm.get_paged_mqa_logits_metadata(c_lens, 64, num_sms).cpu().tolist()
        req = (c_lens.max(dim=1).values if lens_2d else c_lens).tolist()
        segs = [max(1, (n + 255) // 256) for n in req]
        total = sum(segs)
        q, r = divmod(total, num_sms)
        expect = []
        for s in range(num_sms + 1):
            start, b = s * q + min(s, r), 0
            while b < batch and start >= segs[b]:
                start -= segs[b]
                b += 1
            expect.append([b, start] if b < batch else [batch, 0])
        assert meta == expect, (batch, num_sms)


def test_paged_cuda_graph_with_new_lengths():
    c = make_paged(32, 2, 64, 128, 2000, lens_2d=True, seed=13)
    lens = c["lens"].clone()
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        hopgemm.fp8_fp4_paged_mqa_logits((c["q"], None), c["cache"], c["w"], lens, c["table"],
                                         hopgemm.get_paged_mqa_logits_metadata(lens, 64, hopgemm.get_num_sms()),
                                         c["max_len"], clean_logits=True)  # warm the kernels up
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, stream=stream):
            meta = hopgemm.get_paged_mqa_logits_metadata(lens, 64, hopgemm.get_num_sms())
            out = hopgemm.fp8_fp4_paged_mqa_logits((c["q"], None), c["cache"], c["w"], lens, c["table"], meta,
                                                   c["max_len"], clean_logits=True)
    g = torch.Generator(device="cuda").manual_seed(14)
    for _ in range(3):
        new = (c["lens"].float() * torch.rand(c["lens"].shape, device="cuda", generator=g)).int()
        lens.copy_(new)
        graph.replay()
        torch.cuda.synchronize()
        eager = hopgemm.fp8_fp4_paged_mqa_logits(c["q"], c["cache"], c["w"], new, c["table"],
                                                 hopgemm.get_paged_mqa_logits_metadata(new, 64, hopgemm.get_num_sms()),
                                                 c["max_len"], clean_logits=True)
        assert torch.equal(out.view(torch.int32), eager.view(torch.int32))


def test_paged_python_names():
    c = make_paged(5, 1, 64, 128, 300, lens_2d=False, seed=15)
    meta = hopgemm.get_paged_mqa_logits_metadata(c["lens"], 64, hopgemm.get_num_sms())
    a = hopgemm.fp8_paged_mqa_logits(c["q"], c["cache"], c["w"], c["lens"], c["table"], meta, c["max_len"], True)
    b = hopgemm.fp8_fp4_paged_mqa_logits((c["q"], None), c["cache"], c["w"], c["lens"], c["table"], meta, c["max_len"],
                                         True, torch.bfloat16)
    assert a.shape == b.shape == (5, c["max_len"]) and a.dtype == torch.float32 and b.dtype == torch.bfloat16
    assert a.stride(0) * 4 % 1024 == 0 and b.stride(0) * 2 % 1024 == 0
    assert torch.equal(torch.isinf(a), torch.isinf(b))


def test_paged_bad_inputs_raise_and_write_nothing():
    c = make_paged(4, 2, 64, 128, 300, lens_2d=True)
    meta = hopgemm.get_paged_mqa_logits_metadata(c["lens"], 64, hopgemm.get_num_sms())
    buf, view = poisoned(8, c["max_len"], 1024, torch.float32)
    with pytest.raises(ValueError, match="kv_cache"):
        _C.fp8_paged_mqa_logits(c["q"], c["cache"][:, :, :, :128], c["w"], c["lens"], c["table"], meta, view, True)
    with pytest.raises(ValueError, match="context_lens"):
        _C.fp8_paged_mqa_logits(c["q"], c["cache"], c["w"], c["lens"][:3], c["table"], meta, view, True)
    with pytest.raises(NotImplementedError, match="block_kv"):
        hopgemm.get_paged_mqa_logits_metadata(c["lens"], 32, 132)
    torch.cuda.synchronize()
    assert torch.isnan(buf).all()
