"""A small representative subset of hopgemm's grouped GEMMs, for compute-sanitizer (memcheck, racecheck, synccheck): every
layout, the CTA pairings forced, and a K-grouped descriptor ring that wraps.

Run through tests/gpu/sanitize.sh; on its own it just runs the cases once and checks the results (every computed row
within its bound, every other row untouched: tests/gpu/grouped_inputs.py). A build of hopgemm without the grouped GEMMs
fails it (exit 1): the sanitizers must not pass over nothing.
"""
import sys

import hopgemm
from hopgemm.testing import (
    m_grouped_ids_layout,
    m_grouped_packed_layout,
    m_grouped_psum_layout,
)

# The GPU tests' helpers, same directory.
from grouped_inputs import CONTIGUOUS, K_GROUPED, MASKED, run_contiguous, run_k_grouped, run_masked


def main():
    missing = [name for name in (CONTIGUOUS, MASKED, K_GROUPED) if not hasattr(hopgemm, name)]
    if missing:
        print(f"grouped sanitizer subset: this build of hopgemm has no {', '.join(missing)}")
        sys.exit(1)
    n, k = 576, 640  # 4.5 N blocks of 128, 5 K blocks
    # Contiguous: skipped -1 blocks at both ends and an id out of range (4 = G), padding rows inside blocks, an odd
    # number of 128-row blocks; then psum gaps and a packed layout whose groups straddle tiles.
    run_contiguous(m_grouped_ids_layout([(-1, 128), 1, 129, (4, 128), 0, 127, (-1, 128)]), n, k, seed=1)
    run_contiguous(m_grouped_psum_layout([1, 0, 129, 70], trailing_rows=128), n, k, seed=2)
    run_contiguous(m_grouped_packed_layout([1, 0, 129, 70, 3]), n, k, seed=3)
    # Masked: M_max not a multiple of 64, masked_m above M_max (clamped) and 0, guard rows around d.
    run_masked([200, 0, 5000, 17], 200, n, k, expected_m=64, seed=4, guard_rows=64)
    # K-grouped: an empty group, few tiles per group (CTAs skip groups), C aliased and distinct, M not a multiple of 4.
    run_k_grouped(256, 256, [128, 0, 256, 128, 0, 384], seed=5, c_mode="aliased")
    run_k_grouped(126, 768, [256, 128, 0], seed=6, c_mode="distinct", sf_layout="aligned")  # M % 4 != 0: padded scales
    # The pairings, forced: B-sharing pairs on group ids (two groups in a pair, a padding peer, a phantom pair past M),
    # A-sharing pairs on packed row ranges, a K-grouped B-sharing pair; and a K-grouped walk on three CTAs, each of
    # which enters all 16 groups and so wraps its ring of descriptor slots (stages + 1 of them).
    pairs = dict(block_m=128, block_n=128, num_sms=6)
    forced(dict(pairs, cluster_m=2, cluster_n=1),
           lambda: run_contiguous(m_grouped_ids_layout([100, 129, (-1, 128), 1, 70]), n, k, seed=7))
    forced(dict(pairs, cluster_m=1, cluster_n=2),
           lambda: run_contiguous(m_grouped_packed_layout([1, 0, 129, 70, 3]), n, k, seed=8))
    forced(dict(pairs, cluster_m=2, cluster_n=1), lambda: run_k_grouped(384, 256, [128, 0, 256] * 3, seed=9))
    forced(dict(num_sms=3), lambda: run_k_grouped(256, 256, [128] * 16, seed=10, c_mode="distinct"))
    print("grouped sanitizer subset ran")


def forced(overrides, case):
    """case() with the grouped GEMMs' configuration changed by `overrides` (hopgemm's per-thread tuning hook)."""
    hopgemm._C._set_grouped_config_overrides(overrides)
    try:
        case()
    finally:
        hopgemm._C._set_grouped_config_overrides({})


if __name__ == "__main__":
    main()
