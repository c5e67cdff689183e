"""hopgemm's indexer ops against DeepGEMM's in one process, same inputs (DeepGEMM's tests/test_attention.py cases,
reference/anchors_h100.md), plus the memory bandwidth of a device copy measured in the same run.

Each op is timed as the user calls it (allocation of the logits, every kernel: DeepGEMM's fp8_mqa_logits includes its
separate clean_logits kernel, hopgemm's writes -inf in the same pass), CUDA events, L2 flushed (256 MB write) before
each call, median of --iters. Ratios > 1: hopgemm faster.
Usage: python bench/vs_deepgemm_indexer.py [--iters 15] [--quick] [--prefill-only] [--json OUT]"""
import argparse
import json
import math
import statistics
import sys

import torch

import hopgemm

try:
    import deep_gemm
except ImportError:  # still measures hopgemm and the copy
    deep_gemm = None


def timed(fn, iters):
    flush = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
    fn()
    times = []
    for _ in range(iters):
        flush.zero_()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e3)
    return statistics.median(times)


def copy_bandwidth(iters):
    src = torch.empty(2 << 30, dtype=torch.int8, device="cuda")
    dst = torch.empty_like(src)
    t = timed(lambda: dst.copy_(src), iters)
    return 2 * src.numel() / t / 1e3  # GB/s


def prefill_inputs(s, s_kv, h, d, cp):
    q = torch.randn(s, h, d, device="cuda").to(torch.float8_e4m3fn)
    kv = torch.randn(s_kv, d, device="cuda")
    sf = kv.abs().amax(1).clamp(1e-4) / 448.0
    kv = (kv / sf[:, None]).to(torch.float8_e4m3fn)
    w = torch.randn(s, h, device="cuda")
    ks = torch.zeros(s, dtype=torch.int32, device="cuda")
    if cp:
        chunk, cp_size = s // 2, s_kv // s
        cp_id = cp_size // 3
        i = torch.arange(chunk, device="cuda")
        ke = torch.cat([cp_id * chunk + i, (cp_size * 2 - 1 - cp_id) * chunk + i]).int()
    else:
        ke = (torch.arange(s, device="cuda") + (s_kv - s)).int()
    cost = int((ke.clamp(0, s_kv) - ks.clamp(0, s_kv)).sum())
    return (q, (kv, sf), w, ks, ke), cost


def paged_inputs(batch, next_n, h, d, avg):
    ctx = torch.randint(int(0.7 * avg), int(1.3 * avg), (batch,), device="cuda", dtype=torch.int32)
    blocks = (ctx + 63) // 64
    num_blocks = int(blocks.sum())
    max_len = int(blocks.max()) * 64
    cache = torch.randint(0, 255, (num_blocks, 64 * (d + 4)), dtype=torch.uint8, device="cuda")
    cache.view(num_blocks, 64 * (d + 4))[:, 64 * d:].view(torch.float32)[:] = 0.01
    cache[:, :64 * d] &= 0x77  # finite e4m3 values
    cache = cache.view(num_blocks, 64, 1, d + 4)
    table = torch.zeros(batch, int(blocks.max()), dtype=torch.int32, device="cuda")
    perm = torch.randperm(num_blocks, device="cuda", dtype=torch.int32)
    off = 0
    for b, n in enumerate(blocks.tolist()):
        table[b, :n] = perm[off:off + n]
        off += n
    q = torch.randn(batch, next_n, h, d, device="cuda").to(torch.float8_e4m3fn)
    w = torch.randn(batch * next_n, h, device="cuda")
    lens = ((ctx[:, None] + 1) * torch.rand(batch, next_n, device="cuda")).int()
    lens[:, -1] = ctx
    kv_bytes = int(blocks.sum()) * 64 * (d + 4)
    return (q, cache, w, lens.contiguous(), table, max_len), int(ctx.sum()), kv_bytes


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iters", type=int, default=15)
    ap.add_argument("--quick", action="store_true", help="fewer cases")
    ap.add_argument("--json", default=None)
    ap.add_argument("--prefill-only", action="store_true", help="the fp8_mqa_logits cases only (for A/B reruns)")
    args = ap.parse_args()
    rows = []
    copy_gbs = copy_bandwidth(args.iters)
    print(f"device copy: {copy_gbs:.0f} GB/s  ({torch.cuda.get_device_name()})")
    num_sms = hopgemm.get_num_sms()

    dims = (128,) if args.quick else (128, 64, 32)
    for s_kv in (8192, 65536):
        for h in (32, 64):
            for d in dims:
                for cp in (True, False):
                    a, cost = prefill_inputs(2048, s_kv, h, d, cp)
                    flops = 2 * cost * h * d
                    ours = timed(lambda: hopgemm.fp8_mqa_logits(*a, clean_logits=True), args.iters)
                    theirs = timed(lambda: deep_gemm.fp8_mqa_logits(*a, clean_logits=True), args.iters) if deep_gemm else float("nan")
                    rows.append(dict(op="fp8_mqa_logits", s=2048, s_kv=s_kv, h=h, d=d, cp=cp, ours_us=ours,
                                     deepgemm_us=theirs, ratio=theirs / ours, tflops=flops / ours / 1e6))
                    print(f"prefill S=2048 SK={s_kv} H={h} D={d} CP={int(cp)}: ours {ours:7.1f} us "
                          f"({flops / ours / 1e6:5.0f} TFLOPS), DeepGEMM {theirs:7.1f} us, x{theirs / ours:.2f}", flush=True)
                    del a
    for dtype in () if args.prefill_only else (torch.float32,) if args.quick else (torch.float32, torch.bfloat16):
        for batch, avg in ((256, 8192), (4096, 8192), (256, 65536)):
            for next_n in (1, 2):
                for h in (32, 64):
                    a, total_len, kv_bytes = paged_inputs(batch, next_n, h, 128, avg)
                    q, cache, w, lens, table, max_len = a
                    meta = hopgemm.get_paged_mqa_logits_metadata(lens, 64, num_sms)
                    ours = timed(lambda: hopgemm.fp8_fp4_paged_mqa_logits(q, cache, w, lens, table, meta, max_len, False, dtype), args.iters)
                    if deep_gemm:
                        dmeta = deep_gemm.get_paged_mqa_logits_metadata(lens, 64, num_sms)
                        theirs = timed(lambda: deep_gemm.fp8_fp4_paged_mqa_logits((q, None), cache, w, lens, table, dmeta, max_len, False, dtype), args.iters)
                    else:
                        theirs = float("nan")
                    gbs = kv_bytes / ours / 1e3
                    rows.append(dict(op="fp8_paged_mqa_logits", batch=batch, next_n=next_n, h=h, d=128, avg=avg,
                                     dtype=str(dtype), ours_us=ours, deepgemm_us=theirs, ratio=theirs / ours,
                                     kv_gbs=gbs, of_copy=gbs / copy_gbs))
                    print(f"paged {str(dtype)[6:]} B={batch} next_n={next_n} H={h} L={avg}: ours {ours:7.1f} us "
                          f"({gbs:5.0f} GB/s = {gbs / copy_gbs:.0%} of copy), DeepGEMM {theirs:7.1f} us, x{theirs / ours:.2f}", flush=True)
                    del a, q, cache, w, lens, table
    if not args.prefill_only:
        lens = torch.randint(6000, 10000, (4096, 2), dtype=torch.int32, device="cuda")
        meta_us = timed(lambda: hopgemm.get_paged_mqa_logits_metadata(lens, 64, num_sms), args.iters)
        meta_dg = timed(lambda: deep_gemm.get_paged_mqa_logits_metadata(lens, 64, num_sms), args.iters) if deep_gemm else float("nan")
        print(f"metadata B=4096: ours {meta_us:.1f} us, DeepGEMM {meta_dg:.1f} us")
        rows.append(dict(op="get_paged_mqa_logits_metadata", batch=4096, ours_us=meta_us, deepgemm_us=meta_dg))
    for op in ("fp8_mqa_logits", "fp8_paged_mqa_logits"):
        r = [x["ratio"] for x in rows if x["op"] == op and x["ratio"] == x["ratio"]]
        if r:
            print(f"{op}: geomean x{math.exp(sum(map(math.log, r)) / len(r)):.3f} over {len(r)} cases, min x{min(r):.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(device=torch.cuda.get_device_name(), copy_gbs=copy_gbs, rows=rows), f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
