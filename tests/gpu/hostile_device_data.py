"""Cases of hostile device data for the grouped GEMMs, run by tests/gpu/test_hostile_device_data.py in a worker process
under a timeout (a hang fails its case instead of blocking the suite; a fault ends only the worker).

Each case gives an op device tensors that no host check sees and that disagree with what the host knows: K-grouped
ks_tensor values of 1-127 (a unit with no k-blocks once hung the overlapped consumer), not multiples of 128, negative,
huge, summing past the buffers; masked_m, psum / packed ends and group ids negative, huge, decreasing, out of range or
random int32. The result must be the clamped meaning (include/hopgemm/grouped_gemm.hpp, computed here by
hopgemm.testing.k_grouped_device_ks / m_grouped_ends_layout / m_grouped_masked_layout) on every computed row, and every
other row untouched.

Usage: python hostile_device_data.py CASE...   (tests/gpu/case_worker.py: reports case by case, exits after a CUDA
error so that the parent restarts a worker for the remaining cases)
"""
import sys

import torch

import hopgemm
from case_worker import serve
from grouped_inputs import (
    CONTIGUOUS,
    K_GROUPED,
    MASKED,
    check_k_grouped,
    check_m_grouped,
    k_grouped_operands,
    k_grouped_sf,
    m_grouped_operands,
    masked_operands,
    nan_tensor,
)
from hopgemm.testing import (
    MGroupedLayout,
    assert_untouched,
    k_grouped_device_ks,
    m_grouped_ends_layout,
    m_grouped_masked_layout,
)

INT_MIN, INT_MAX = -2**31, 2**31 - 1
HOST_KS = [128, 256, 128, 384]  # the host's list: sum 896, what a, b and the scales hold


def random_int32(count, seed):
    gen = torch.Generator().manual_seed(seed)
    return torch.randint(INT_MIN, INT_MAX, (count,), generator=gen, dtype=torch.int64).tolist()


def k_grouped(device_ks, m=256, n=384, c_mode="aliased", seed=0):
    """k_grouped_fp8_gemm_nt_contiguous with the host's HOST_KS and ks_tensor = device_ks: D[g] = C[g] + A_g B_g^T
    with the clamped Ks, every empty group exactly C[g]."""
    op = getattr(hopgemm, K_GROUPED)
    a, sfa_t, b, sfb_t = k_grouped_operands(m, n, HOST_KS, seed)
    sfa, sfb = k_grouped_sf(sfa_t, "aligned"), k_grouped_sf(sfb_t, "aligned")
    c = torch.randn(len(HOST_KS), m, n, device="cuda") * 32
    ks_tensor = torch.tensor(device_ks, device="cuda", dtype=torch.int32)
    if c_mode == "aliased":
        d = c.clone()
        op((a, sfa), (b, sfb), d, HOST_KS, ks_tensor, d)
    else:
        d = nan_tensor(len(HOST_KS), m, n, dtype=torch.float32)
        op((a, sfa), (b, sfb), d, HOST_KS, ks_tensor, c=c)
    clamped = k_grouped_device_ks(device_ks, sum(HOST_KS))
    check_k_grouped(d, a, sfa, b, sfb, clamped, c=c)


def masked(masked_m, max_m=256, n=512, k=512, seed=0):
    """The masked GEMM with masked_m as given, d between guard rows: rows [0, clamp(masked_m[g], 0, max_m)) computed,
    every other row of d and the guards untouched."""
    op = getattr(hopgemm, MASKED)
    g = len(masked_m)
    a8, sfa, b8, sfb = masked_operands(g, max_m, n, k, seed)
    buf = nan_tensor(g * max_m + 128, n)
    d = buf[64:64 + g * max_m].view(g, max_m, n)
    op((a8, sfa), (b8, sfb), d, torch.tensor(masked_m, device="cuda", dtype=torch.int32), 64)
    torch.cuda.synchronize()
    assert_untouched(buf, [(0, 64), (buf.shape[0] - 64, buf.shape[0])], name="guard rows around d")
    check_m_grouped(d, a8, sfa, b8, sfb, m_grouped_masked_layout(masked_m, max_m))


def contiguous(layout, n=512, k=640, seed=0, **kwargs):
    """The contiguous GEMM of `layout` (an MGroupedLayout of hostile values and their clamped segments) into a
    NaN-poisoned d with a guard block after it."""
    op = getattr(hopgemm, CONTIGUOUS)
    a8, sfa, b8, sfb = m_grouped_operands(layout.num_rows, n, k, layout.num_groups, seed)
    buf = nan_tensor(layout.num_rows + 128, n)
    d = buf[:layout.num_rows]
    op((a8, sfa), (b8, sfb), d, layout.tensor(), **kwargs)
    torch.cuda.synchronize()
    assert_untouched(buf, [(layout.num_rows, buf.shape[0])], name="guard rows after d")
    check_m_grouped(d, a8, sfa, b8, sfb, layout)


def ends(values, num_rows, kind):
    layout = m_grouped_ends_layout(values, num_rows, kind)
    contiguous(layout, use_psum_layout=kind == "psum", use_packed_layout=kind == "packed")


def ids(block_ids, num_groups, overrides=None):
    """Group ids constant over each 128-row block (so the meaning does not depend on the tile height): a block of an
    id in [0, G) computed whole with B[id], every other block a padding block (zeros)."""
    rows = 128 * len(block_ids)
    values, segments, zeroed = [], [], []
    for i, g in enumerate(block_ids):
        values += [g] * 128
        if 0 <= g < num_groups:
            segments.append((g, 128 * i, 128 * (i + 1)))
        else:
            zeroed.append((128 * i, 128 * (i + 1)))
    layout = MGroupedLayout("ids", num_groups, rows, values, segments, [], zeroed)
    if overrides:
        hopgemm._C._set_grouped_config_overrides(overrides)
    try:
        contiguous(layout)
    finally:
        hopgemm._C._set_grouped_config_overrides({})


CASES = {
    # K-grouped ks_tensor against the host's [128, 256, 128, 384].
    "k_grouped_values_below_128": lambda: k_grouped([64, 1, 127, 100]),  # every group empty: D = C (once: a hang)
    "k_grouped_values_not_multiples_of_128": lambda: k_grouped([200, 300, 129, 100]),
    "k_grouped_negative_and_huge": lambda: k_grouped([-128, INT_MAX, INT_MIN, 128], c_mode="distinct"),
    "k_grouped_sum_past_the_buffers": lambda: k_grouped([384, 384, 384, 384]),
    "k_grouped_valid_but_not_the_host_list": lambda: k_grouped([0, 128, 256, 128], c_mode="distinct"),
    "k_grouped_random_int32": lambda: k_grouped(random_int32(4, 1)),
    "k_grouped_random_small": lambda: k_grouped([v % 700 for v in random_int32(4, 2)]),
    # Masked: masked_m beyond [0, M_max].
    "masked_negative_huge_and_extremes": lambda: masked([-1, INT_MIN, INT_MAX, 300, 17]),
    "masked_random_int32": lambda: masked(random_int32(6, 3)),
    # Psum / packed ends (640 rows): decreasing, negative, past M_sum, the int32 extremes.
    "psum_decreasing_negative_and_huge": lambda: ends([300, 100, -5, INT_MAX, 700, INT_MIN, 640], 640, "psum"),
    "psum_random_int32": lambda: ends(random_int32(8, 4), 640, "psum"),
    "psum_random_in_range": lambda: ends([v % 800 for v in random_int32(8, 5)], 640, "psum"),
    "packed_decreasing_negative_and_huge": lambda: ends([1, 0, 200, -7, 2**30, 5, INT_MIN], 523, "packed"),
    "packed_random_in_range": lambda: ends([v % 600 for v in random_int32(9, 6)], 523, "packed"),
    # Group ids per 128-row block (G = 4): the int32 extremes, ids >= G, negative ids other than -1.
    "ids_out_of_range": lambda: ids([3, -1, INT_MAX, 0, INT_MIN, 4, 1, 1, 2, -7, 3], 4),
    "ids_random_int32": lambda: ids([v if i % 3 else v % 4 for i, v in enumerate(random_int32(9, 7))], 4),
    # The same under B-sharing pairs of m-blocks (pairs of two groups, of a group and an invalid id) and A-sharing
    # pairs.
    "ids_out_of_range_b_sharing_pairs": lambda: ids([3, -1, INT_MAX, 0, INT_MIN, 4, 1, 2, 2, -7, 3], 4,
                                                    dict(block_m=128, block_n=128, cluster_m=2, cluster_n=1)),
    "ids_out_of_range_a_sharing_pairs": lambda: ids([3, 9, 0, -2, 1, 1, 2], 4,
                                                    dict(block_m=128, block_n=128, cluster_m=1, cluster_n=2)),
}


if __name__ == "__main__":
    serve(CASES, sys.argv[1:],
          label=lambda name: f"tests/gpu/test_hostile_device_data.py::test_hostile_device_data[{name}]")
