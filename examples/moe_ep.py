"""An expert-parallel DeepSeek-style MoE layer on hopgemm's FP8 grouped GEMMs, spread over the GPUs of one host.

Each rank holds `experts / world` experts (gate/up W13 [2I, H] and down W2 [H, I], FP8 with 128x128 block scales) and
`tokens` tokens of its own. Forward: router (top-k of a softmax), NCCL all-to-all dispatch of each (token, expert) row
to the expert's rank, per-token FP8 casts, m_grouped_fp8_gemm_nt_contiguous for gate/up (group ids, groups padded to
the contiguous layout's alignment), SwiGLU, the same GEMM for down, all-to-all combine weighted by the router.
Backward (the expert weights' and the tokens' gradients; the router's is left out): dgrad by
m_grouped_fp8_gemm_nn_contiguous over transposed weight copies, weight gradients by k_grouped_fp8_gemm_nt_contiguous
(each expert's rows are its K). Decode: the same layer on a few tokens with fixed-capacity all-to-alls and the masked
layout (m_grouped_fp8_gemm_nt_masked, masked_m on the device), captured in a CUDA graph and replayed on new tokens.

Every result is checked against a single-GPU float32 reference of the same FP8 weights (rank 0 gathers the tokens),
and each phase is timed.

Launch (one process per GPU; on one GPU the all-to-alls are copies and everything else is the same):
    torchrun --nproc-per-node 2 examples/moe_ep.py
    torchrun --nproc-per-node 2 examples/moe_ep.py --tokens 4096 --hidden 7168 --inter 2048 --experts 32 --topk 8
Exits non-zero if a check fails.
"""
import argparse
import os
import sys

import torch
import torch.distributed as dist
import torch.nn.functional as F

import hopgemm
from hopgemm.testing import calc_diff
from hopgemm.utils import per_block_cast_to_fp8, per_channel_cast_to_fp8, per_token_cast_to_fp8

FP8 = torch.float8_e4m3fn
# calc_diff bars against the float32 reference: every GEMM operand is cast to FP8 (about 2^-4 relative per element),
# the gradients twice over.
FORWARD_BAR, GRAD_BAR = 2e-3, 5e-3


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tokens", type=int, default=2048, help="tokens per rank (prefill / training step)")
    p.add_argument("--hidden", type=int, default=2048, help="H, a multiple of 128")
    p.add_argument("--inter", type=int, default=1024, help="I, each expert's intermediate size, a multiple of 128")
    p.add_argument("--experts", type=int, default=16, help="experts over all ranks, a multiple of the world size")
    p.add_argument("--topk", type=int, default=4)
    p.add_argument("--decode-tokens", type=int, default=64, help="tokens per rank of the decode step")
    p.add_argument("--iters", type=int, default=20, help="timed iterations of each phase")
    return p.parse_args()


# ---- weights ---------------------------------------------------------------------------------------------------------

def block_cast(w):
    """[E, N, K] float -> (FP8 [E, N, K], FP32 [E, N/128, K/128]): each expert cast per 128x128 block."""
    casts = [per_block_cast_to_fp8(w[e].to(torch.bfloat16).contiguous()) for e in range(w.shape[0])]
    return torch.stack([c[0] for c in casts]), torch.stack([c[1] for c in casts])


def dequantize_blocks(w8, sf):
    return w8.float() * sf.repeat_interleave(128, -2).repeat_interleave(128, -1)[..., :w8.shape[-2], :w8.shape[-1]]


class Experts:
    """This rank's experts: the FP8 weights the GEMMs read (W13, W2 and, for dgrad, their transposes) and the float32
    weights they stand for (the reference's)."""

    def __init__(self, args, rank, world):
        gen = torch.Generator(device="cuda").manual_seed(1234)  # the same full weights on every rank
        h, i, e = args.hidden, args.inter, args.experts
        w13 = torch.randn(e, 2 * i, h, device="cuda", generator=gen) / h ** 0.5
        w2 = torch.randn(e, h, i, device="cuda", generator=gen) / i ** 0.5
        self.router = (torch.randn(h, e, device="cuda", generator=gen) / h ** 0.5).to(torch.bfloat16)
        self.per_rank = e // world
        local = slice(rank * self.per_rank, (rank + 1) * self.per_rank)
        self.w13, self.w2 = block_cast(w13[local]), block_cast(w2[local])
        # dgrad reads each weight transposed, K-major: its own cast of W^T, passed to the NN GEMM as a [G, K, N] view.
        w13t, w2t = block_cast(w13[local].transpose(1, 2)), block_cast(w2[local].transpose(1, 2))
        self.w13_nn = (w13t[0].transpose(1, 2), w13t[1].transpose(1, 2))
        self.w2_nn = (w2t[0].transpose(1, 2), w2t[1].transpose(1, 2))
        # The reference's weights (rank 0 checks): all experts, dequantised from the same casts.
        self.all_w13 = dequantize_blocks(*block_cast(w13)) if rank == 0 else None
        self.all_w2 = dequantize_blocks(*block_cast(w2)) if rank == 0 else None


# ---- routing and the all-to-alls --------------------------------------------------------------------------------------

def route(x, experts, topk):
    """(expert ids [T, k], combine weights [T, k] FP32): top-k of the router's softmax, renormalised. In FP32, so that
    the reference, which sees every rank's tokens at once, picks the same experts."""
    scores = torch.softmax(x.float() @ experts.router.float(), dim=-1)
    weights, ids = scores.topk(topk, dim=-1)
    return ids, weights / weights.sum(-1, keepdim=True)


class Dispatch:
    """Where each (token, expert) pair of this rank goes: pairs sorted by expert (so by rank), the counts sent to and
    received from each rank (host lists: the all-to-all sizes), and the local expert of each received row."""

    def __init__(self, ids, per_rank, world):
        t, k = ids.shape
        expert = ids.reshape(-1)
        self.order = torch.argsort(expert, stable=True)
        self.token = (torch.arange(t * k, device=ids.device) // k)[self.order]
        dest = expert[self.order] // per_rank
        send = torch.bincount(dest, minlength=world).int()
        recv = torch.empty_like(send)
        dist.all_to_all_single(recv, send)
        self.send_counts, self.recv_counts = send.tolist(), recv.tolist()
        self.local_expert = self.exchange((expert[self.order] % per_rank).int().unsqueeze(1)).squeeze(1)

    def exchange(self, rows):
        """Rows of this rank's pairs (in dispatch order) -> the rows other ranks sent here."""
        out = rows.new_empty(sum(self.recv_counts), *rows.shape[1:])
        dist.all_to_all_single(out, rows.contiguous(), self.recv_counts, self.send_counts)
        return out

    def give_back(self, rows):
        """Rows computed here for received pairs -> this rank's pairs, in dispatch order."""
        out = rows.new_empty(sum(self.send_counts), *rows.shape[1:])
        dist.all_to_all_single(out, rows.contiguous(), self.send_counts, self.recv_counts)
        return out


class ContiguousLayout:
    """Received rows sorted by local expert and padded per expert to the contiguous layout's alignment: the row of each
    received row in the padded [M_pad, .] operands, the group id of each padded row (-1: padding) and each expert's
    padded row count (the K of its weight-gradient GEMM)."""

    def __init__(self, local_expert, per_rank):
        align = hopgemm.get_mk_alignment_for_contiguous_layout()
        counts = torch.bincount(local_expert.long(), minlength=per_rank)
        padded = (counts + align - 1) // align * align
        starts = torch.cumsum(padded, 0) - padded
        order = torch.argsort(local_expert, stable=True)
        rank_in_expert = torch.arange(len(order), device=order.device) - (torch.cumsum(counts, 0) - counts)[
            local_expert[order].long()]
        self.row = torch.empty_like(order)
        self.row[order] = starts[local_expert[order].long()] + rank_in_expert
        self.rows = int(padded.sum())
        self.group_ids = torch.full((self.rows,), -1, dtype=torch.int32, device=order.device)
        self.group_ids[self.row] = local_expert.int()
        self.ks = padded.tolist()

    def scatter(self, rows):
        out = rows.new_zeros(self.rows, *rows.shape[1:])
        out[self.row] = rows
        return out


# ---- the expert computation -------------------------------------------------------------------------------------------

def swiglu(gate_up):
    g, u = gate_up.float().chunk(2, dim=-1)
    return (F.silu(g) * u).to(torch.bfloat16)


def swiglu_backward(gate_up, d_act):
    g, u = gate_up.float().chunk(2, dim=-1)
    sig = torch.sigmoid(g)
    d = d_act.float()
    return torch.cat([d * u * sig * (1 + g * (1 - sig)), d * g * sig], dim=-1).to(torch.bfloat16)


def grouped(a, w, layout, out_cols, nn=False):
    """D [M_pad, out_cols] BF16 = A [M_pad, K] (cast per token here) @ W[group]^T over the layout's groups."""
    d = torch.zeros(layout.rows, out_cols, device="cuda", dtype=torch.bfloat16)  # padding tiles stay untouched
    gemm = hopgemm.m_grouped_fp8_gemm_nn_contiguous if nn else hopgemm.m_grouped_fp8_gemm_nt_contiguous
    gemm(per_token_cast_to_fp8(a), w, d, layout.group_ids)
    return d


def weight_grad(d_out, inp, ks):
    """dW[g] = d_out_g^T @ inp_g (FP32 [G, N_out, N_in]) by the K-grouped GEMM: each expert's padded rows are its K;
    both operands cast per 128 rows x 1 column and stored per group as K-major [mn, k_g] blocks."""
    def k_major_groups(x):
        x8, sf = per_channel_cast_to_fp8(x)  # x [M_pad, mn] -> sf [M_pad / 128, mn]; groups start at multiples of 128
        flat = torch.cat([x8[o:o + k].T.reshape(-1) for o, k in zip(offsets, ks)])
        return flat, hopgemm.get_mn_major_tma_aligned_tensor(sf.T)
    offsets = [sum(ks[:g]) for g in range(len(ks))]
    d = torch.empty(len(ks), d_out.shape[1], inp.shape[1], device="cuda", dtype=torch.float32)
    ks_tensor = torch.tensor(ks, device="cuda", dtype=torch.int32)
    hopgemm.k_grouped_fp8_gemm_nt_contiguous(k_major_groups(d_out), k_major_groups(inp), d, ks, ks_tensor)
    return d


def moe_forward(x, experts, args):
    """This rank's layer output [T, H] and what the backward needs."""
    ids, weights = route(x, experts, args.topk)
    dispatch = Dispatch(ids, experts.per_rank, dist.get_world_size())
    layout = ContiguousLayout(dispatch.local_expert, experts.per_rank)
    a = layout.scatter(dispatch.exchange(x[dispatch.token]))
    gate_up = grouped(a, experts.w13, layout, 2 * args.inter)
    act = swiglu(gate_up)
    y = grouped(act, experts.w2, layout, args.hidden)
    pair_w = weights.reshape(-1)[dispatch.order]
    y_pairs = dispatch.give_back(y[layout.row]).float() * pair_w[:, None]
    out = torch.zeros(x.shape, device="cuda", dtype=torch.float32).index_add_(0, dispatch.token, y_pairs)
    return out.to(torch.bfloat16), (dispatch, layout, a, gate_up, act, pair_w)


def moe_backward(d_out, x, experts, args, saved):
    """(dx [T, H], dW13 [E_local, 2I, H], dW2 [E_local, H, I]) for the output gradient d_out [T, H]."""
    dispatch, layout, a, gate_up, act, pair_w = saved
    d_y = layout.scatter(dispatch.exchange((d_out[dispatch.token].float() * pair_w[:, None]).to(torch.bfloat16)))
    d_w2 = weight_grad(d_y, act, layout.ks)
    d_act = grouped(d_y, experts.w2_nn, layout, args.inter, nn=True)
    d_gate_up = swiglu_backward(gate_up, d_act)
    d_w13 = weight_grad(d_gate_up, a, layout.ks)
    d_a = grouped(d_gate_up, experts.w13_nn, layout, args.hidden, nn=True)
    d_pairs = dispatch.give_back(d_a[layout.row]).float()
    dx = torch.zeros(x.shape, device="cuda", dtype=torch.float32).index_add_(0, dispatch.token, d_pairs)
    return dx.to(torch.bfloat16), d_w13, d_w2


# ---- decode: fixed capacity, masked layout, one CUDA graph ------------------------------------------------------------

class DecodeStep:
    """The layer on `tokens` tokens per rank with nothing read back to the host: every rank sends each rank a slab of
    `tokens x topk` rows (the most it can send there), the received rows go to per-expert slabs of the masked layout
    (masked_m counted on the device), and the all-to-alls have equal splits. So the whole step can be captured."""

    def __init__(self, experts, args):
        self.experts, self.args, self.world = experts, args, dist.get_world_size()
        self.cap = args.decode_tokens * args.topk
        self.m_max = self.world * self.cap
        e, h = experts.per_rank, args.hidden
        self.trash = e * self.m_max  # the flat slab row where empty slots write
        self.slabs = torch.zeros(e * self.m_max + 1, h, device="cuda", dtype=torch.bfloat16)
        self.gate_up = torch.zeros(e, self.m_max, 2 * args.inter, device="cuda", dtype=torch.bfloat16)
        self.y = torch.zeros(e, self.m_max, h, device="cuda", dtype=torch.bfloat16)

    def __call__(self, x):
        args, experts, world, cap = self.args, self.experts, self.world, self.cap
        t, h = x.shape
        ids, weights = route(x, experts, args.topk)
        expert = ids.reshape(-1)
        dest = expert // experts.per_rank
        onehot = (dest[:, None] == torch.arange(world, device="cuda")).long()
        slot = (torch.cumsum(onehot, 0) - 1).gather(1, dest[:, None]).squeeze(1)  # place in dest's slab
        token = torch.arange(t * args.topk, device="cuda") // args.topk
        send = torch.zeros(world, cap, h, device="cuda", dtype=torch.bfloat16)
        send[dest, slot] = x[token]
        send_expert = torch.full((world, cap), -1, device="cuda", dtype=torch.int64)
        send_expert[dest, slot] = expert % experts.per_rank
        recv, recv_expert = torch.empty_like(send), torch.empty_like(send_expert)
        dist.all_to_all_single(recv, send)
        dist.all_to_all_single(recv_expert, send_expert)
        # Received slot -> (local expert, row of its slab); empty slots -> the trash row.
        le = recv_expert.reshape(-1)
        valid = le >= 0
        onehot = ((le[:, None] == torch.arange(experts.per_rank, device="cuda")) & valid[:, None]).long()
        masked_m = onehot.sum(0).int()
        row = (torch.cumsum(onehot, 0) - 1).gather(1, le.clamp(min=0)[:, None]).squeeze(1)
        flat = torch.where(valid, le.clamp(min=0) * self.m_max + row, torch.full_like(le, self.trash))
        self.slabs[flat] = recv.reshape(-1, h)
        e, m_max, inter = experts.per_rank, self.m_max, args.inter
        a8, sfa = per_token_cast_to_fp8(self.slabs[:self.trash])
        hopgemm.m_grouped_fp8_gemm_nt_masked((a8.view(e, m_max, h), sfa.view(e, m_max, -1)), experts.w13,
                                             self.gate_up, masked_m, expected_m=max(1, cap // e))
        act8, sf_act = per_token_cast_to_fp8(swiglu(self.gate_up).view(-1, inter))
        hopgemm.m_grouped_fp8_gemm_nt_masked((act8.view(e, m_max, inter), sf_act.view(e, m_max, -1)), experts.w2,
                                             self.y, masked_m, expected_m=max(1, cap // e))
        back_rows = self.y.view(-1, h)[flat.clamp(max=self.trash - 1)] * valid[:, None]
        back = torch.empty_like(send)
        dist.all_to_all_single(back, back_rows.view(world, cap, h).contiguous())
        # Pairs are in token order here: the weighted sum over each token's k rows, in a fixed order (a replay must
        # match an eager call bit for bit, which atomic adds would not).
        y_pairs = back[dest, slot].float().view(t, args.topk, h) * weights[..., None]
        return y_pairs.sum(1).to(torch.bfloat16)


# ---- the single-GPU reference -----------------------------------------------------------------------------------------

def reference(x, d_out, experts, args):
    """float32 output and gradients of the layer on all ranks' tokens, with the same FP8 weights dequantised."""
    x = x.float().requires_grad_(True)
    w13 = experts.all_w13.clone().requires_grad_(True)
    w2 = experts.all_w2.clone().requires_grad_(True)
    ids, weights = route(x.detach().to(torch.bfloat16), experts, args.topk)
    out = torch.zeros_like(x)
    for e in range(args.experts):
        token, k = (ids == e).nonzero(as_tuple=True)
        if len(token) == 0:
            continue
        g, u = (x[token] @ w13[e].T).chunk(2, dim=-1)
        out = out.index_add(0, token, ((F.silu(g) * u) @ w2[e].T) * weights[token, k][:, None])
    if d_out is None:
        return out.detach()
    out.backward(d_out.float())
    return out.detach(), x.grad, w13.grad, w2.grad


# ---- checks and timing ------------------------------------------------------------------------------------------------

def gather(t):
    """Every rank's t (same shape), concatenated on rank 0 (others: None)."""
    parts = [torch.empty_like(t) for _ in range(dist.get_world_size())] if dist.get_rank() == 0 else None
    dist.gather(t.contiguous(), parts, dst=0)
    return torch.cat(parts) if parts is not None else None


def timed(fn, iters):
    """Mean milliseconds of fn() over iters runs after one warm-up, all ranks in step."""
    fn()
    dist.barrier()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / iters


def main():
    args = parse_args()
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local_rank))
    rank, world = dist.get_rank(), dist.get_world_size()
    if args.experts % world or args.hidden % 128 or args.inter % 128:
        sys.exit("--experts must be a multiple of the world size, --hidden and --inter multiples of 128")
    experts = Experts(args, rank, world)
    gen = torch.Generator(device="cuda").manual_seed(100 + rank)
    x = torch.randn(args.tokens, args.hidden, device="cuda", generator=gen).to(torch.bfloat16)
    d_out = (torch.randn(args.tokens, args.hidden, device="cuda", generator=gen) * 1e-2).to(torch.bfloat16)

    out, saved = moe_forward(x, experts, args)
    dx, d_w13, d_w2 = moe_backward(d_out, x, experts, args, saved)

    # Decode: eager once (also NCCL's warm-up before capture), then captured and replayed on new tokens.
    step = DecodeStep(experts, args)
    x_dec = torch.randn(args.decode_tokens, args.hidden, device="cuda", generator=gen).to(torch.bfloat16)
    static_x = x_dec.clone()
    eager_dec = step(static_x)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_out = step(static_x)
    replays = []
    for r in range(3):
        static_x.copy_(torch.randn(args.decode_tokens, args.hidden, device="cuda", generator=gen).to(torch.bfloat16))
        graph.replay()
        replays.append((static_x.clone(), static_out.clone(), step(static_x.clone())))
    torch.cuda.synchronize()

    # Checks on rank 0 against the reference over all ranks' tokens.
    results = {}
    all_x, all_d_out, all_out, all_dx = gather(x), gather(d_out), gather(out), gather(dx)
    all_dw13, all_dw2 = gather(d_w13), gather(d_w2)
    all_dec_x, all_dec = gather(x_dec), gather(eager_dec)
    graph_bitwise = all(torch.equal(replayed, eager) for _, replayed, eager in replays)
    replay_x, replay_out = gather(replays[-1][0]), gather(replays[-1][1])
    if rank == 0:
        ref_out, ref_dx, ref_dw13, ref_dw2 = reference(all_x, all_d_out, experts, args)
        results = {
            "forward": (calc_diff(all_out.float(), ref_out), FORWARD_BAR),
            "d_x": (calc_diff(all_dx.float(), ref_dx), GRAD_BAR),
            "d_w13": (calc_diff(all_dw13, ref_dw13), GRAD_BAR),
            "d_w2": (calc_diff(all_dw2, ref_dw2), GRAD_BAR),
            "decode (eager)": (calc_diff(all_dec.float(), reference(all_dec_x, None, experts, args)), FORWARD_BAR),
            "decode (graph replay)": (calc_diff(replay_out.float(), reference(replay_x, None, experts, args)),
                                      FORWARD_BAR),
        }
    ok = torch.tensor([int(graph_bitwise)], device="cuda")
    dist.all_reduce(ok, op=dist.ReduceOp.MIN)

    # Timing (all ranks): forward, forward + backward, one decode step replayed.
    fwd_ms = timed(lambda: moe_forward(x, experts, args), args.iters)
    step_ms = timed(lambda: moe_backward(d_out, x, experts, args, moe_forward(x, experts, args)[1]), args.iters)
    dec_ms = timed(graph.replay, args.iters)
    gemm_flops = 2 * args.tokens * args.topk * 3 * args.hidden * args.inter  # gate/up (2I) + down, per rank
    if rank == 0:
        print(f"hopgemm {getattr(hopgemm, '__version__', '')} MoE EP on {world} x "
              f"{torch.cuda.get_device_name()}: {args.experts} experts ({experts.per_rank} per rank), top-{args.topk}, "
              f"H {args.hidden}, I {args.inter}, {args.tokens} tokens per rank")
        failed = []
        for name, (diff, bar) in results.items():
            good = diff < bar
            failed += [] if good else [name]
            print(f"  {name:24s} calc_diff {diff:.2e} (bar {bar:.0e}) {'ok' if good else 'FAILED'}")
        print(f"  decode graph replays bitwise equal to eager calls on every rank: {bool(ok.item())}")
        if not ok.item():
            failed.append("graph replay")
        print(f"  forward {fwd_ms:.3f} ms ({gemm_flops / fwd_ms / 1e9:.0f} GEMM TFLOPS per rank incl. routing and "
              f"all-to-alls), forward + backward {step_ms:.3f} ms, decode step (graph, {args.decode_tokens} tokens "
              f"per rank) {dec_ms * 1e3:.1f} us")
        print("moe_ep: " + ("all checks passed" if not failed else "FAILED: " + ", ".join(failed)))
        status = torch.tensor([len(failed)], device="cuda")
    else:
        status = torch.tensor([0], device="cuda")
    dist.broadcast(status, src=0)
    # A graph that captured NCCL collectives keeps the communicator busy: destroying the process group while it exists
    # hangs in ncclCommDestroy on every rank (pytorch/pytorch#115388; seen here on two H200s), so free it first.
    torch.cuda.synchronize()
    graph.reset()
    del graph
    dist.destroy_process_group()
    sys.exit(1 if status.item() else 0)


if __name__ == "__main__":
    main()
