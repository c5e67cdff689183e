"""Time explicit FP8 GEMM configurations for one shape (GPU machine), next to the heuristics' own choice.

    python bench/try_configs.py 4096x512x32768 "block_m=256,block_n=128,k_splits=2" "block_m=128,block_n=128"

Each config is a comma-separated list of Sm90Fp8GemmConfig fields (the rest: the heuristics' choice, stages
refilled for the tile). L2 flushed before every call, median of 30 (hopgemm.testing.bench); the result is
checked against the heuristics' output.
"""
import sys

import torch

import hopgemm
from hopgemm.testing import bench, calc_diff
from hopgemm.utils import per_block_cast_to_fp8, per_token_cast_to_fp8


def main():
    m, n, k = (int(x) for x in sys.argv[1].split("x"))
    a8, sfa = per_token_cast_to_fp8(torch.randn(m, k, device="cuda", dtype=torch.bfloat16))
    b8, sfb = per_block_cast_to_fp8(torch.randn(n, k, device="cuda", dtype=torch.bfloat16))
    sfa = hopgemm.get_mn_major_tma_aligned_tensor(sfa)
    ref = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    hopgemm.fp8_gemm_nt((a8, sfa), (b8, sfb), ref)
    t = bench(lambda: hopgemm.fp8_gemm_nt((a8, sfa), (b8, sfb), ref))
    print(f"{m}x{n}x{k} heuristics: {t * 1e6:8.1f} us  {2 * m * n * k / t * 1e-12:6.0f} TFLOPS")
    for spec in sys.argv[2:]:
        overrides = {kv.split("=")[0]: int(kv.split("=")[1]) for kv in spec.split(",")}
        d = torch.empty_like(ref)
        call = lambda: hopgemm._C._fp8_gemm_nt_with_config((a8, sfa), (b8, sfb), d, overrides=overrides)  # noqa: E731
        try:
            call()
        except Exception as e:  # an invalid config is reported, not fatal
            print(f"  {spec}: {e}")
            continue
        t = bench(call)
        print(f"  {spec:60s} {t * 1e6:8.1f} us  {2 * m * n * k / t * 1e-12:6.0f} TFLOPS  diff {calc_diff(d, ref):.1e}")


if __name__ == "__main__":
    main()
