"""Fourteenth session: test_k_tail_under_split_k[192x128, fused] failed on the H100. Which of its ingredients (A's
last tile row partly past M, K ending inside the last k-block, 3 splits of 6/6/5 k-blocks, sfb_regs) makes 192x128's
fused split-K wrong? Run from /tmp on the GPU machine with tests/gpu on sys.path."""
import sys

import torch

import hopgemm
from hopgemm.testing import calc_diff
from fp8_gemm_inputs import make_inputs, poisoned, reference

for m, n, k, splits, extra in [(300, 1000, 2112, 3, {}), (384, 1000, 2112, 3, {}), (300, 1000, 2176, 3, {}),
                               (384, 1000, 2176, 3, {}), (300, 1000, 2112, 2, {}), (520, 1000, 7296, 3, {}),
                               (300, 1000, 2112, 3, {"sfb_regs": 1}), (520, 1000, 2112, 3, {}),
                               (300, 1000, 7296, 3, {}), (300, 1024, 2112, 3, {})]:
    a8, sfa, b8, sfb = make_inputs(m, n, k, False, seed=7)
    d = poisoned(m, n, torch.bfloat16)
    cfg = dict(block_m=192, block_n=128, k_splits=splits, splitk_fused=1, cluster_m=1, cluster_n=1, wg_order=0,
               d_in_stage=0, d_passes=1, promote_overlap=0, **extra)
    try:
        hopgemm._C._fp8_gemm_nt_with_config((a8, sfa), (b8, sfb), d, c=None, recipe=None, overrides=cfg)
        torch.cuda.synchronize()
        ref = reference(a8, sfa, b8, sfb, False)
        bad = (d.double() - ref).abs() > 1e-2 * ref.abs().max()
        rows = bad.any(1).nonzero().flatten().tolist()
        cols = bad.any(0).nonzero().flatten().tolist()
        print(f"{m}x{n}x{k} split {splits} {extra}: nan {int(d.isnan().sum())} diff {calc_diff(d, ref):.2e} "
              f"bad rows {rows[:3]}..{rows[-3:]} ({len(rows)}) cols {cols[:3]}..{cols[-3:]} ({len(cols)})")
    except Exception as e:  # noqa: BLE001
        print(f"{m}x{n}x{k} split {splits} {extra}: {type(e).__name__}: {str(e)[:300]}")
    sys.stdout.flush()
