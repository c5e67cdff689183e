"""Bandwidth of the fused FP8 quantisation kernels vs a device-to-device copy of the same bytes, measured in
the same run (CUDA events, L2 flushed before every timed call, median of >= 30).

Bytes per call = x read once + x_fp8 written once + sf written once. The copy baseline moves the same total
(reads half, writes half) with torch's copy kernel. Writes a JSON to $HOPGEMM_BENCH_OUT when it is set.

Run: python tests/gpu/bench_quantize.py [--iters 50]"""
import argparse
import json
import os
import statistics
import sys


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--iters", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=5)
    args = parser.parse_args()

    try:
        import torch
    except ImportError:
        print("SKIP: torch is not installed")
        return 0
    if not torch.cuda.is_available():
        print("SKIP: no CUDA device")
        return 0
    import hopgemm
    from hopgemm import utils as hutils

    flush = torch.empty(256 * 1024 * 1024, dtype=torch.uint8, device="cuda")

    def time_ms(fn):
        for _ in range(args.warmup):
            fn()
        times = []
        for _ in range(args.iters):
            flush.zero_()  # evict x (and everything else) from the 50 MB L2
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
        return statistics.median(times)

    device = torch.cuda.get_device_name()
    results = []
    print(f"{device}: BF16 -> FP8 e4m3 quantisation, median of {args.iters}, L2 flushed")
    print(f"{'kernel':<10} {'m':>6} {'n':>6} {'MB':>8} {'us':>9} {'GB/s':>8} {'copy GB/s':>10} {'vs copy':>8}")
    for m, n in ((4096, 7168), (16384, 7168)):
        x = torch.randn((m, n), dtype=torch.bfloat16, device="cuda")
        for kind, fn, sf_elems in (
            ("token", hutils.per_token_cast_to_fp8, m * ((n + 127) // 128)),
            ("block", hutils.per_block_cast_to_fp8, ((m + 127) // 128) * ((n + 127) // 128)),
            ("channel", hutils.per_channel_cast_to_fp8, (m // 128) * n),
        ):
            total = x.numel() * 2 + x.numel() + sf_elems * 4
            src = torch.empty(total // 2, dtype=torch.uint8, device="cuda")
            dst = torch.empty_like(src)
            t_copy = time_ms(lambda: dst.copy_(src))
            t = time_ms(lambda: fn(x, use_ue8m0=False))
            gbs, copy_gbs = total / t / 1e6, 2 * (total // 2) / t_copy / 1e6
            print(f"{kind:<10} {m:>6} {n:>6} {total / 1e6:>8.1f} {t * 1e3:>9.1f} {gbs:>8.0f} {copy_gbs:>10.0f} "
                  f"{gbs / copy_gbs:>7.0%}")
            results.append({"kernel": f"per_{kind}_cast_to_fp8", "m": m, "n": n, "in_dtype": "bfloat16",
                            "bytes": total, "time_us": t * 1e3, "gb_per_s": gbs,
                            "copy_time_us": t_copy * 1e3, "copy_gb_per_s": copy_gbs, "ratio_vs_copy": gbs / copy_gbs})

    out = os.environ.get("HOPGEMM_BENCH_OUT")
    if out:
        with open(out, "w") as f:
            json.dump({"device": device, "torch": torch.__version__,
                       "hopgemm": getattr(hopgemm, "__version__", None), "iters": args.iters,
                       "method": "CUDA events, 256 MB L2 flush before each call, median", "results": results},
                      f, indent=2)
        print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
