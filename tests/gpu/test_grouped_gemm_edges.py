"""Edges of the M-grouped and K-grouped FP8 GEMMs that the main grouped tests (test_grouped_gemm.py) leave out: K not
a multiple of 128 in every M-grouped layout (the last k-block partial, TMA zero-filling past K), the packed layout with
MN-major A scales, masked groups of up to M_max = 4096 rows, and an M-grouped [G, N, K] B beyond 2^31 elements whose last
groups start past 2^31 bytes (test_grouped_gemm.py's 64-bit K-grouped case has A and B there).

Run: pytest tests/gpu/test_grouped_gemm_edges.py [-k "not slow"]   (the 2^31-element cases are named *_slow)
"""
import os
import sys

import pytest

from sm90_torch import require_torch_on_sm90

torch = require_torch_on_sm90("CUDA tensors")

from case_worker import run_cases  # noqa: E402
from grouped_inputs import run_contiguous, run_masked  # noqa: E402
from packed_mn_major_cases import CASES as PACKED_MN_MAJOR  # noqa: E402
from hopgemm.testing import (  # noqa: E402
    m_grouped_ids_layout,
    m_grouped_packed_layout,
    m_grouped_psum_layout,
)

HERE = os.path.dirname(os.path.abspath(__file__))
PSUM_SIZES = [1, 127, 0, 129, 300, 0, 64, 5]
PACKED_SIZES = [1, 1, 200, 3, 0, 129, 64, 1, 500, 0]


def free_gib():
    return torch.cuda.mem_get_info()[0] / 2**30


@pytest.mark.parametrize("k", [144, 1040, 2112, 7232])  # 1.125, 8.125, 16.5 and 56.5 k-blocks
@pytest.mark.parametrize("kind", ["ids", "psum", "packed", "masked"])
def test_m_grouped_k_not_a_multiple_of_128(kind, k):
    n = 2112
    if kind == "masked":
        run_masked([0, 1, 64, 129, 256, 200], 256, n, k, expected_m=128, seed=k + 1, guard_rows=64)
        return
    layout = {"ids": m_grouped_ids_layout([(-1, 128), 0, 1, 127, 129, (-1, 128), 300]),
              "psum": m_grouped_psum_layout(PSUM_SIZES, trailing_rows=128),
              "packed": m_grouped_packed_layout(PACKED_SIZES, trailing_rows=9)}[kind]
    run_contiguous(layout, n, k, seed=k)


@pytest.fixture(scope="module")
def packed_mn_major_results():
    return run_cases([sys.executable, os.path.join(HERE, "packed_mn_major_cases.py")], list(PACKED_MN_MAJOR), cwd=HERE)


@pytest.mark.parametrize("case", list(PACKED_MN_MAJOR))
def test_packed_layout_with_mn_major_sfa(case, packed_mn_major_results):
    # MN-major TMA-aligned A scales with groups that start inside tiles (tests/gpu/packed_mn_major_cases.py, in a worker
    # process: these faulted until the packed layout read MN-major sfa by pointer).
    assert packed_mn_major_results[case] == "ok", packed_mn_major_results[case]


@pytest.mark.parametrize("sf_mn_major", [False, True])
def test_masked_max_m_4096(sf_mn_major):
    # DeepGEMM's largest masked M_max: full groups, an empty one, one row, and groups ending one row short of M_max and
    # inside a tile.
    run_masked([4096, 0, 1, 3000, 4095, 129], 4096, 2048, 1024, expected_m=2048, seed=41, guard_rows=64,
               sf_mn_major=sf_mn_major)


@pytest.mark.parametrize("kind", ["ids", "psum"])
def test_m_grouped_b_beyond_2_31_elements_slow(kind):
    # B [33, 8192, 8192]: 2.2e9 elements, group 32's weights start at byte 2^31 of B, groups 16 and 31 either side of
    # 2^30 and just below 2^31; rows only for those groups and the first.
    groups, n, k = 33, 8192, 8192
    assert groups * n * k > 2**31 and 32 * n * k == 2**31
    if free_gib() < 16:
        pytest.skip(f"needs 16 GiB of free GPU memory, {free_gib():.1f} GiB free")
    sizes = [0] * groups
    sizes[0], sizes[16], sizes[31], sizes[32] = 5, 130, 64, 200
    layout = m_grouped_ids_layout(sizes) if kind == "ids" else m_grouped_psum_layout(sizes, trailing_rows=128)
    run_contiguous(layout, n, k, seed=43)
