"""A small representative subset of hopgemm's kernels, for compute-sanitizer (memcheck, racecheck, synccheck).

Run through tests/gpu/sanitize.sh; on its own it just runs the cases once and checks the results.
"""
import torch

import hopgemm
from hopgemm.utils import per_block_cast_to_fp8, per_channel_cast_to_fp8, per_token_cast_to_fp8

from fp8_gemm_inputs import check, make_inputs  # same directory: the GPU tests' inputs and checks


def gemm_case(m, n, k, recipe_1d1d):
    a8, sfa, b8, sfb = make_inputs(m, n, k, recipe_1d1d, seed=m + n + k)
    d = torch.zeros(m, n, device="cuda", dtype=torch.float32 if recipe_1d1d else torch.bfloat16)
    hopgemm.fp8_gemm_nt((a8, sfa), (b8, sfb), d, c=d if recipe_1d1d else None,
                        recipe=(1, 1, 128) if recipe_1d1d else (1, 128, 128))
    check(d, a8, sfa, b8, sfb, recipe_1d1d)


# The consumer pipelines the heuristics may pick, forced through the config hook: the two waves of a 256-row
# tile pipelined (1D1D), D staged in the last pipeline stage, split-K (the last split sums the tile), B scales in
# registers.
FORCED = [
    (True, dict(block_m=256, block_n=80, promote_overlap=1, cluster_m=1, cluster_n=2)),
    (False, dict(block_m=256, block_n=128, d_in_stage=1, d_passes=2, num_stages=4, cluster_m=1, cluster_n=2)),
    (False, dict(block_m=64, block_n=64, k_splits=3, cluster_m=1, cluster_n=1)),
    (False, dict(block_m=64, block_n=64, k_splits=3, promote_overlap=1)),
    (True, dict(block_m=128, block_n=64, k_splits=2)),
    (False, dict(block_m=128, block_n=128, sfb_regs=1, cluster_m=1, cluster_n=2)),
    (False, dict(block_m=64, block_n=64, k_splits=3, sfb_regs=1)),
]


def forced_case(recipe_1d1d, overrides, m=300, n=1000, k=1152):
    a8, sfa, b8, sfb = make_inputs(m, n, k, recipe_1d1d)
    d = torch.zeros(m, n, device="cuda", dtype=torch.float32 if recipe_1d1d else torch.bfloat16)
    full = dict(cluster_m=1, cluster_n=1, d_in_stage=0, d_passes=1, k_splits=1, promote_overlap=0, sfb_regs=0)
    full.update(overrides)
    # MN-major scales on this path (row-major on gemm_case's): both layouts run under the sanitizer.
    hopgemm._C._fp8_gemm_nt_with_config(
        (a8, hopgemm.get_mn_major_tma_aligned_tensor(sfa)), (b8, hopgemm.get_mn_major_tma_aligned_tensor(sfb)), d,
        c=d if recipe_1d1d else None, recipe=(1, 1, 128) if recipe_1d1d else (1, 128, 128), overrides=full)
    check(d, a8, sfa, b8, sfb, recipe_1d1d)


def main():
    for m, n, k in [(65, 576, 144), (256, 512, 1024), (129, 2112, 384)]:
        gemm_case(m, n, k, False)
        gemm_case(m, n, k, True)
    gemm_case(200, 1000, 2560, True)  # row-major scales in 16-byte rows: TMA chunks (sf_chunks), 5 per tile
    for recipe_1d1d, overrides in FORCED:
        forced_case(recipe_1d1d, overrides)
    sf = torch.rand(2, 97, 5, device="cuda")
    assert torch.equal(hopgemm.get_mn_major_tma_aligned_tensor(sf), sf)
    x = torch.randn(256, 384, device="cuda", dtype=torch.bfloat16)
    per_token_cast_to_fp8(x), per_block_cast_to_fp8(x), per_channel_cast_to_fp8(x)
    torch.cuda.synchronize()
    print("sanitizer subset ran")


if __name__ == "__main__":
    main()
