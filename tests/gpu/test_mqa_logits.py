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

from mqa_logits_inputs import (NEG_INF, check_paged, check_prefill, make_paged, make_prefill, poisoned,  # noqa: E402
                               ranges_causal, ranges_cp, ranges_ragged, ref_paged, ref_prefill, run_paged, run_prefill,
                               token_lens, tol)


# ---- prefill -----------------------------------------------------------------------------------------------------------


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
    # 5632 x 2 lengths fill the kernel's shared-memory staging exactly; 8000 x 2 and 12000 take the global-memory path.
    for batch, num_sms, lens_2d in [(1, 132, False), (37, 132, True), (4096, 132, True), (300, 7, False), (0, 132, False),
                                    (5632, 132, True), (8000, 132, True), (12000, 114, False)]:
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
