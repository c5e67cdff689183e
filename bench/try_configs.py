"""Time explicit FP8 GEMM configurations for one shape (GPU machine), next to the heuristics' own choice.

    python bench/try_configs.py 4096x512x32768 "block_m=256,block_n=128,k_splits=2" "block_m=128,block_n=128"
    python bench/try_configs.py wgrad:7168x2112x4096 "wg_order=1"

Each config is a comma-separated list of Sm90Fp8GemmConfig fields (the rest: the heuristics' choice, stages
refilled for the tile). L2 flushed before every call, median of 30 (hopgemm.testing.bench); the result is
checked against the heuristics' output. A `wgrad:` shape is the 1D1D weight-gradient problem as `hopgemm bench`
times it: A and B scaled per 1x128 (both scale tensors MN-major, TMA-aligned), FP32 D += A B^T (C aliased to D).
"""
import sys

import torch

import hopgemm
from hopgemm.testing import bench, calc_diff
from hopgemm.utils import per_block_cast_to_fp8, per_token_cast_to_fp8


def main():
    shape = sys.argv[1]
    wgrad = shape.startswith("wgrad:")
    m, n, k = (int(x) for x in shape.removeprefix("wgrad:").split("x"))
    a8, sfa = per_token_cast_to_fp8(torch.randn(m, k, device="cuda", dtype=torch.bfloat16))
    if wgrad:
        b8, sfb = per_token_cast_to_fp8(torch.randn(n, k, device="cuda", dtype=torch.bfloat16))
        sfb = hopgemm.get_mn_major_tma_aligned_tensor(sfb)
        c0 = torch.randn(m, n, device="cuda", dtype=torch.float32)
    else:
        b8, sfb = per_block_cast_to_fp8(torch.randn(n, k, device="cuda", dtype=torch.bfloat16))
    sfa = hopgemm.get_mn_major_tma_aligned_tensor(sfa)

    def run(d, overrides=None):
        # D += A B^T accumulates on every call: the result is checked on a fresh copy of C, timing reuses it.
        c = d if wgrad else None
        if overrides is None:
            hopgemm.fp8_gemm_nt((a8, sfa), (b8, sfb), d, c=c)
        else:
            hopgemm._C._fp8_gemm_nt_with_config((a8, sfa), (b8, sfb), d, c, overrides=overrides)

    fresh = (lambda: c0.clone()) if wgrad else (lambda: torch.empty(m, n, device="cuda", dtype=torch.bfloat16))
    ref = fresh()
    run(ref)
    t = bench(lambda: run(ref))
    print(f"{shape} heuristics: {t * 1e6:8.1f} us  {2 * m * n * k / t * 1e-12:6.0f} TFLOPS")
    ref = fresh()
    run(ref)
    for spec in sys.argv[2:]:
        overrides = {kv.split("=")[0]: int(kv.split("=")[1]) for kv in spec.split(",")}
        d = fresh()
        try:
            run(d, overrides)
        except Exception as e:  # an invalid config is reported, not fatal
            print(f"  {spec}: {e}")
            continue
        diff = calc_diff(d, ref)
        t = bench(lambda: run(d, overrides))  # noqa: B023
        print(f"  {spec:60s} {t * 1e6:8.1f} us  {2 * m * n * k / t * 1e-12:6.0f} TFLOPS  diff {diff:.1e}")


if __name__ == "__main__":
    main()
