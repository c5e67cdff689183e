"""Inputs, float64 references and checks of the DeepSeek-V3.2 indexer ops, shared by tests/gpu/test_mqa_logits.py and
tests/gpu/sanitize_mqa_logits.py: FP8 inputs quantised per row from BF16 ones, KV ranges (causal, context-parallel,
ragged with empty and length-1 ranges), paged caches in the fused layout with optional -1 blocks, 1-D and 2-D context
lengths; outputs poisoned with NaN so that what the op must write and what it must leave are both checked."""
import torch

import hopgemm
from hopgemm import _C
from hopgemm.testing import calc_diff

DEVICE = "cuda"

NEG_INF = float("-inf")


def tol(bf16):
    return 3e-5 if bf16 else 5e-6


def quant_rows(x):
    """Per-row FP8 (one FP32 scale per token, amax / 448): DeepGEMM's per_custom_dims_cast_to_fp8(x, (0,))."""
    sf = x.float().abs().amax(dim=-1).clamp(1e-4) / 448.0
    return (x.float() / sf[..., None]).to(torch.float8_e4m3fn), sf


def make_prefill(s, s_kv, h, d, seed=0):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    q_bf = torch.randn(s, h, d, device=DEVICE, generator=g).bfloat16()
    kv_bf = torch.randn(s_kv, d, device=DEVICE, generator=g).bfloat16()
    w = torch.randn(s, h, device=DEVICE, generator=g)
    kv, sf = quant_rows(kv_bf)
    return q_bf, kv_bf, q_bf.to(torch.float8_e4m3fn), kv, sf, w


def ref_prefill(q, kv, w):
    """float64 [S, S_kv]: sum_h relu(q[i, h] . kv[j]) * w[i, h] (q, kv already dequantised, any float dtype)."""
    q, kv, w = q.double(), kv.double(), w.double()
    out = torch.empty(q.shape[0], kv.shape[0], dtype=torch.float64, device=DEVICE)
    for i in range(0, q.shape[0], 16):
        s = torch.einsum("shd,kd->shk", q[i:i + 16], kv).relu_()
        out[i:i + 16] = (s * w[i:i + 16, :, None]).sum(1)
    return out


def ranges_causal(s, s_kv):
    ks = torch.zeros(s, dtype=torch.int32, device=DEVICE)
    ke = (torch.arange(s, device=DEVICE) + (s_kv - s) + 1).clamp(max=s_kv).int()
    return ks, ke


def ranges_cp(s, s_kv):
    """DeepGEMM's context-parallel pattern (tests/test_attention.py): two chunks of one rank's queries."""
    chunk, cp_size = s // 2, s_kv // s
    cp_id = cp_size // 3
    ks = torch.zeros(s, dtype=torch.int32, device=DEVICE)
    ke = torch.zeros(s, dtype=torch.int32, device=DEVICE)
    for i in range(chunk):
        ke[i] = cp_id * chunk + i
        ke[i + chunk] = (cp_size * 2 - 1 - cp_id) * chunk + i
    return ks, ke


def ranges_ragged(s, s_kv, seed=1):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    a = torch.randint(-5, s_kv + 5, (s,), device=DEVICE, generator=g)
    b = torch.randint(-5, s_kv + 5, (s,), device=DEVICE, generator=g)
    ks, ke = torch.minimum(a, b).int(), torch.maximum(a, b).int()
    ke[::7] = ks[::7]          # empty ranges
    ke[1::11] = ks[1::11] + 1  # length 1
    return ks, ke


def poisoned(rows, cols, stride, dtype):
    buf = torch.full((rows, stride), float("nan"), dtype=dtype, device=DEVICE)
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
    cols = torch.arange(s_kv, device=DEVICE)
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
    # Against the unquantised inputs, DeepGEMM's 1e-3 holds for the FP8 rounding averaged over many logits; over a
    # handful it does not (fuzz mqa_logits:29, one valid logit: 14.125 against 12.94, 3.8e-3, while the FP8-simulated
    # reference gave 14.117, 1.7e-7). The simulated check above is the kernel's bound either way.
    if int(valid.sum()) >= 256:
        assert calc_diff(got_v, bf_v) < 1e-3
    return buf


# ---- paged -------------------------------------------------------------------------------------------------------------

def make_paged(batch, next_n, h, d, avg, lens_2d, seed=0, holes=False):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    ctx = torch.randint(max(int(0.7 * avg), 1), int(1.3 * avg) + 2, (batch,), device=DEVICE, generator=g).int()
    ctx[0] = 0 if batch > 2 else ctx[0]
    if batch > 3:
        ctx[1] = 1
    max_len = int(ctx.max()) + next_n
    blocks_per = (ctx + 63) // 64
    max_blocks = max(int(blocks_per.max()), 1)
    num_blocks = int(blocks_per.sum()) + 3
    kv_bf = torch.randn(num_blocks, 64, d, device=DEVICE, generator=g).bfloat16()
    kv, sf = quant_rows(kv_bf)
    cache = torch.cat([kv.view(torch.uint8).reshape(num_blocks, 64 * d), sf.view(torch.uint8).reshape(num_blocks, 256)],
                      dim=1).view(num_blocks, 64, 1, d + 4)
    perm = torch.randperm(num_blocks, device=DEVICE, generator=g).int()
    table = torch.full((batch, max_blocks), -1, dtype=torch.int32, device=DEVICE)
    offset = 0
    for b, n in enumerate(blocks_per.tolist()):
        table[b, :n] = perm[offset:offset + n]
        offset += n
    if holes:
        table[:, 1::3] = -1
    q_bf = torch.randn(batch, next_n, h, d, device=DEVICE, generator=g).bfloat16()
    w = torch.randn(batch * next_n, h, device=DEVICE, generator=g)
    if lens_2d:
        lens = ((ctx[:, None] + 1) * torch.rand(batch, next_n, device=DEVICE, generator=g)).int()
        lens[:, -1] = ctx
        lens = lens.contiguous()
    else:
        lens = ctx
    return dict(q_bf=q_bf, q=q_bf.to(torch.float8_e4m3fn), kv=kv, sf=sf, cache=cache, w=w, table=table, lens=lens,
                max_len=max_len)


def token_lens(lens, next_n):
    if lens.dim() == 2:
        return lens.clamp(min=0).long()
    t = torch.arange(next_n, device=DEVICE)
    return (lens[:, None].long() - next_n + t[None, :] + 1).clamp(min=0)


def ref_paged(c, next_n):
    """float64 [B * next_n, max_len] over the dequantised cache; NaN where a query may not look."""
    batch, _, h, d = c["q"].shape
    tl = token_lens(c["lens"], next_n)
    out = torch.full((batch * next_n, c["max_len"]), float("nan"), dtype=torch.float64, device=DEVICE)
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
