"""Host cost per call from Python, against the project's target (<= 12 us per GEMM call end to end: five tensor
conversions, the stream lookup, the heuristics' memo, a kernel-cache hit and the launch), with the pieces it is made of.
A benchmark, not a test: it prints each figure against its target and exits 0 unless something fails to run. With
--cpp BINARY it runs the C++ figures too (hopgemm_host_cost, built with the tests: build/tests/hopgemm_host_cost).

Usage (on the GPU machine, alone): cd /tmp && python <repo>/bench/host_cost.py [--cpp <build>/tests/hopgemm_host_cost]
"""
import argparse
import gc
import subprocess
import sys
import time

import torch

import hopgemm
from hopgemm import _C

GEMM_TARGET_US = 12.0


def host_us_per_call(fn, calls=500, repeats=10):
    """Best host time of one call over `repeats` batches, each short enough not to fill the launch queue; the garbage
    collector is off while timing, as in timeit."""
    fn()
    best = float("inf")
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeats):
            torch.cuda.synchronize()
            start = time.perf_counter()
            for _ in range(calls):
                fn()
            best = min(best, (time.perf_counter() - start) / calls)
    finally:
        if gc_was_enabled:
            gc.enable()
    torch.cuda.synchronize()
    return best * 1e6


def report(what, us, target_us=None):
    verdict = "" if target_us is None else f"  target {target_us:.0f} us: {'met' if us <= target_us else 'MISSED'}"
    print(f"{what:<44} {us:6.2f} us{verdict}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cpp", help="also run this hopgemm_host_cost binary (the C++ figures)")
    args = parser.parse_args()
    print(f"host cost per call from Python, best of 10 batches of 500 calls on {torch.cuda.get_device_name()}")
    a8, sfa = hopgemm.per_token_cast_to_fp8(torch.randn(128, 256, device="cuda", dtype=torch.bfloat16))
    b8, sfb = hopgemm.per_block_cast_to_fp8(torch.randn(256, 256, device="cuda", dtype=torch.bfloat16))
    d = torch.empty(128, 256, device="cuda", dtype=torch.bfloat16)
    report("hopgemm.fp8_gemm_nt (128 x 256 x 256)", host_us_per_call(lambda: hopgemm.fp8_gemm_nt((a8, sfa), (b8, sfb), d)),
           GEMM_TARGET_US)
    x = torch.randn(16, 128, dtype=torch.bfloat16, device="cuda")
    q = torch.empty(16, 128, dtype=torch.float8_e4m3fn, device="cuda")
    sf = torch.empty(16, 1, dtype=torch.float32, device="cuda")
    report("  _C.per_token_cast_to_fp8 (16 x 128)", host_us_per_call(lambda: _C.per_token_cast_to_fp8(x, q, sf)))
    report("  one tensor conversion", host_us_per_call(lambda: _C.is_mn_major_tma_aligned(sf)))
    sys.stdout.flush()
    if args.cpp:
        return subprocess.run([args.cpp]).returncode
    return 0


if __name__ == "__main__":
    sys.exit(main())
