"""hopgemm's BF16 GEMM against DeepGEMM's and cuBLASLt's (torch.matmul), in one process, on the same inputs, on the
same GPU.

    source .anchor/build_deepgemm.sh .anchor/deepgemm-54e2261.tgz   # import deep_gemm works after this (optional:
                                                                     # without it the DeepGEMM column is empty)
    python bench/bf16_vs_deepgemm.py [--rounds 5] [--iters 10] [--sets SET,...] [--shapes SET:MxNxK,...]
                                     [--out FILE.json]

Rows (DeepGEMM's BF16 test layouts, tests/test_bf16.py, on the DeepSeek-V3 (N, K) pairs of bench/vs_deepgemm.py):
  fwd    M in (128, 4096) x the seven (N, K), A and B K-major, BF16 D; and 8192^3; and the FP32-output pairs
         (N, K) = (256, 7168), (129280, 7168) at M = 4096.
  dgrad  (4096, K, N) for each (N, K): A K-major, B MN-major ([N, K] given as a [K, N] buffer's transpose), BF16 D.
  wgrad  (N, K, 4096) for each (N, K): A and B MN-major, FP32 D += A B^T (C aliases D).
  contiguous  M-grouped, group ids (DeepGEMM's default layout): (G, M per group) in ((4, 8192), (8, 4096)) x (N, K) in
         ((6144, 7168), (4096, 2048)), each group's rows padded to 128 with -1 ids; torch: one mm per group.
  masked   (G, M expected) in ((32, 192), (6, 1024)) x the same (N, K), A [G, 4096, K], masked_m = M for every group;
         torch: one mm per group over its masked rows.
Every library gets the very same tensors and the same call shape: hopgemm.bf16_gemm_nt(a, b, d, c) and
deep_gemm.bf16_gemm_nt(a, b, d, c) on the (possibly MN-major) views; torch: torch.mm(a, b.T, out=d) (FP32 D:
out_dtype=torch.float32; accumulating: torch.addmm(d, a, b.T, out=d, out_dtype=...)), cuBLASLt under torch.
Method: each row checked once (calc_diff against the FP32 product, outputs NaN-poisoned), then timed with CUDA events
around each call, a 256 MB L2 flush before it, the libraries interleaved call by call, their order alternating each
round; the median of rounds x iters per library. Ratio = other time / hopgemm time (> 1: hopgemm faster).
"""
import argparse
import json
import math
import statistics
import sys

import torch

DEEPSEEK_V3_NK = ((2112, 7168), (576, 7168), (24576, 1536), (32768, 512), (7168, 16384), (4096, 7168), (7168, 2048))
FP32_OUT_NK = ((256, 7168), (129280, 7168))
FLUSH_BYTES = 256 << 20


GROUPED_NK = ((6144, 7168), (4096, 2048))
CONTIGUOUS_GROUPS = ((4, 8192), (8, 4096))
MASKED_GROUPS = ((32, 192), (6, 1024))
MASKED_MAX_M = 4096


def rows():
    out = [("fwd", (m, n, k)) for m in (128, 4096) for n, k in DEEPSEEK_V3_NK]
    out.append(("fwd", (8192, 8192, 8192)))
    out += [("fwd-fp32", (4096, n, k)) for n, k in FP32_OUT_NK]
    out += [("dgrad", (4096, k, n)) for n, k in DEEPSEEK_V3_NK]
    out += [("wgrad", (n, k, 4096)) for n, k in DEEPSEEK_V3_NK]
    out += [("contiguous", (g, m, n, k)) for g, m in CONTIGUOUS_GROUPS for n, k in GROUPED_NK]
    out += [("masked", (g, m, n, k)) for g, m in MASKED_GROUPS for n, k in GROUPED_NK]
    return out


def grouped_case(set_name, shape, mods, seed):
    """(fns {library: fn(d)}, new_output, reference, select (the computed rows of an output), flops) of an M-grouped
    row."""
    groups, m, n, k = shape
    g = torch.Generator(device="cuda").manual_seed(seed)
    b = torch.randn(groups, n, k, device="cuda", generator=g).to(torch.bfloat16)
    if set_name == "contiguous":
        rows = ((m + 127) // 128) * 128
        a = torch.randn(groups * rows, k, device="cuda", generator=g).to(torch.bfloat16)
        ids = torch.arange(groups, device="cuda", dtype=torch.int32).repeat_interleave(rows)
        ids.view(groups, rows)[:, m:] = -1
        a.view(groups, rows, k)[:, m:] = 0
        shape_d = (groups * rows, n)
        fns = {lib: (lambda mod: lambda d: mod.m_grouped_bf16_gemm_nt_contiguous(a, b, d, ids))(mods[lib])
               for lib in mods}
        fns["torch"] = lambda d: [torch.mm(a[i * rows:i * rows + m], b[i].T, out=d[i * rows:i * rows + m])
                                  for i in range(groups)]

        def reference():
            ref = torch.zeros(shape_d, device="cuda")
            for i in range(groups):
                ref[i * rows:i * rows + m] = a[i * rows:i * rows + m].float() @ b[i].float().T
            return ref
        valid = ids >= 0

        def select(x):
            return x[valid]
    else:
        a = torch.randn(groups, MASKED_MAX_M, k, device="cuda", generator=g).to(torch.bfloat16)
        masked_m = torch.full((groups,), m, device="cuda", dtype=torch.int32)
        shape_d = (groups, MASKED_MAX_M, n)
        fns = {lib: (lambda mod: lambda d: mod.m_grouped_bf16_gemm_nt_masked(a, b, d, masked_m, m))(mods[lib])
               for lib in mods}
        fns["torch"] = lambda d: [torch.mm(a[i, :m], b[i].T, out=d[i, :m]) for i in range(groups)]

        def reference():
            ref = torch.zeros(shape_d, device="cuda")
            ref[:, :m] = torch.bmm(a[:, :m].float(), b.float().transpose(1, 2))
            return ref

        def select(x):
            return x[:, :m]

    def new_output():
        return torch.zeros(shape_d, device="cuda", dtype=torch.bfloat16)
    return fns, new_output, reference, select, 2 * groups * m * n * k


def make_case(set_name, shape, seed):
    m, n, k = shape
    g = torch.Generator(device="cuda").manual_seed(seed)
    a = torch.randn(m, k, device="cuda", generator=g).to(torch.bfloat16)
    b = torch.randn(n, k, device="cuda", generator=g).to(torch.bfloat16)
    if set_name in ("dgrad", "wgrad"):
        b = b.T.contiguous().T  # MN-major
    if set_name == "wgrad":
        a = a.T.contiguous().T
    fp32 = set_name in ("wgrad", "fwd-fp32")
    accumulate = set_name == "wgrad"
    c = torch.randn(m, n, device="cuda", generator=g) if accumulate else None
    return a, b, c, torch.float32 if fp32 else torch.bfloat16


def calls(mods, a, b, c, out_dtype):
    """{library: fn(d)} computing d = a b^T (+ d where accumulating: the caller refills d with c first)."""
    accumulate = c is not None
    fns = {"hopgemm": lambda d: mods["hopgemm"].bf16_gemm_nt(a, b, d, c=d if accumulate else None)}
    if "deepgemm" in mods:
        fns["deepgemm"] = lambda d: mods["deepgemm"].bf16_gemm_nt(a, b, d, c=d if accumulate else None)
    if out_dtype == torch.bfloat16:
        fns["torch"] = lambda d: torch.mm(a, b.T, out=d)
    elif accumulate:
        fns["torch"] = lambda d: torch.addmm(d, a, b.T, out=d, out_dtype=torch.float32)
    else:
        fns["torch"] = lambda d: torch.mm(a, b.T, out=d, out_dtype=torch.float32)
    return fns


def calc_diff(x, y):
    x, y = x.double(), y.double()
    denominator = (x * x + y * y).sum()
    return float(1 - 2 * (x * y).sum() / denominator) if denominator > 0 else 0.0


def time_row(fns, new_output, rounds, iters):
    flush = torch.empty(FLUSH_BYTES, dtype=torch.uint8, device="cuda")
    times = {lib: [] for lib in fns}
    outputs = {lib: new_output() for lib in fns}
    order = list(fns)
    for r in range(rounds):
        for _ in range(iters):
            for lib in (order if r % 2 == 0 else order[::-1]):
                flush.zero_()
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                fns[lib](outputs[lib])
                end.record()
                end.synchronize()
                times[lib].append(start.elapsed_time(end) * 1e3)
    return {lib: statistics.median(t) for lib, t in times.items()}


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--iters", type=int, default=10)
    p.add_argument("--shapes", default="", help="only these rows: SET:MxNxK or SET:GxMxNxK,...")
    p.add_argument("--sets", default="", help="only these sets: fwd,fwd-fp32,dgrad,wgrad,contiguous,masked")
    p.add_argument("--out", default="")
    args = p.parse_args(argv)
    import hopgemm

    mods = {"hopgemm": hopgemm}
    try:
        import deep_gemm

        mods["deepgemm"] = deep_gemm
    except Exception as e:  # noqa: BLE001 (reported; the other columns still run)
        print(f"bf16_vs_deepgemm: no deep_gemm ({type(e).__name__}: {e}); DeepGEMM column empty")
    only = {s for s in args.shapes.split(",") if s}
    sets = {s for s in args.sets.split(",") if s}
    results = []
    header = f"{'set':10} {'shape':>22} {'hopgemm us':>11} {'TFLOPS':>7} {'deepgemm':>9} {'torch':>9} {'dg/hg':>6} {'tc/hg':>6}  diffs"
    print(header)
    for set_name, shape in rows():
        label = f"{set_name}:{'x'.join(map(str, shape))}"
        if (only and label not in only) or (sets and set_name not in sets):
            continue
        *_, m, n, k = shape
        seed = m * 7919 + n * 131 + k
        if set_name in ("contiguous", "masked"):
            fns, new_output, reference, select, flops = grouped_case(set_name, shape, mods, seed)
            ref = select(reference())
        else:
            a, b, c, out_dtype = make_case(set_name, shape, seed)
            fns = calls(mods, a, b, c, out_dtype)
            select, flops = (lambda x: x), 2 * m * n * k

            def new_output():
                return c.clone() if c is not None else torch.full((m, n), float("nan"), device="cuda", dtype=out_dtype)

            ref = (a.float() @ b.float().T) + (c if c is not None else 0)
        diffs = {}
        for lib, fn in fns.items():
            try:
                d = new_output()
                fn(d)
                torch.cuda.synchronize()
                diffs[lib] = calc_diff(select(d), ref)
            except Exception as e:  # noqa: BLE001 (a library that cannot run a row gets no time)
                diffs[lib] = f"{type(e).__name__}: {e}"
        runnable = {lib: fn for lib, fn in fns.items() if isinstance(diffs[lib], float)}
        # Accumulating rows add into d on every call: their time does not depend on its values.
        us = time_row(runnable, new_output, args.rounds, args.iters) if "hopgemm" in runnable else {}
        hg = us.get("hopgemm")
        row = {"set": set_name, "shape": list(shape), "us": us, "diffs": diffs,
               "tflops": flops / hg / 1e6 if hg else None}
        results.append(row)
        ratio = lambda lib: f"{us[lib] / hg:6.3f}" if hg and lib in us else "   n/a"  # noqa: E731
        fmt = lambda lib: f"{us[lib]:9.1f}" if lib in us else "      n/a"  # noqa: E731
        print(f"{set_name:10} {'x'.join(map(str, shape)):>22} {fmt('hopgemm'):>11} "
              f"{row['tflops'] or 0:7.0f} {fmt('deepgemm')} {fmt('torch')} {ratio('deepgemm')} {ratio('torch')}  "
              + " ".join(f"{lib}={v:.1e}" if isinstance(v, float) else f"{lib}={v}" for lib, v in diffs.items()),
              flush=True)
    for lib in ("deepgemm", "torch"):
        ratios = [r["us"][lib] / r["us"]["hopgemm"] for r in results if lib in r["us"] and "hopgemm" in r["us"]]
        if ratios:
            geo = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
            print(f"geomean {lib}/hopgemm time: {geo:.3f} over {len(ratios)} rows (min {min(ratios):.3f}, "
                  f"max {max(ratios):.3f})")
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "rows": results}, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1:])
