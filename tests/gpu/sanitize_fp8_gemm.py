"""A small representative subset of hopgemm's kernels, for compute-sanitizer (memcheck, racecheck, synccheck).

Run through tests/gpu/sanitize.sh; on its own it just runs the cases once and checks the results.
"""
import torch

import hopgemm
from hopgemm.testing import calc_diff
from hopgemm.utils import per_block_cast_to_fp8, per_channel_cast_to_fp8, per_token_cast_to_fp8


def gemm_case(m, n, k, recipe_1d1d):
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
    a8, sfa = per_token_cast_to_fp8(a)
    b8, sfb = per_token_cast_to_fp8(b) if recipe_1d1d else per_block_cast_to_fp8(b)
    out_dtype = torch.float32 if recipe_1d1d else torch.bfloat16
    d = torch.zeros(m, n, device="cuda", dtype=out_dtype)
    hopgemm.fp8_gemm_nt((a8, sfa), (b8, sfb), d, c=d if recipe_1d1d else None,
                        recipe=(1, 1, 128) if recipe_1d1d else (1, 128, 128))
    ref = a.float() @ b.float().T
    assert calc_diff(d, ref) < 1e-3, (m, n, k, recipe_1d1d)


def main():
    for m, n, k in [(65, 576, 144), (256, 512, 1024), (129, 2112, 384)]:
        gemm_case(m, n, k, False)
        gemm_case(m, n, k, True)
    sf = torch.rand(2, 97, 5, device="cuda")
    assert torch.equal(hopgemm.get_mn_major_tma_aligned_tensor(sf), sf)
    x = torch.randn(256, 384, device="cuda", dtype=torch.bfloat16)
    per_token_cast_to_fp8(x), per_block_cast_to_fp8(x), per_channel_cast_to_fp8(x)
    torch.cuda.synchronize()
    print("sanitizer subset ran")


if __name__ == "__main__":
    main()
