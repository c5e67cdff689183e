"""The packed contiguous layout with MN-major TMA-aligned A scales, groups starting inside tiles (the scale rows come by
TMA from a tile row that is not a multiple of the tile height): cases of test_grouped_gemm_edges.py run in a worker
process (tests/gpu/case_worker.py), because until the fix (docs/RELIABILITY.md: MN-major sfa by TMA from a row that is
not a multiple of 4) they stopped the GPU with an illegal instruction, which in the test process would take every later
test's CUDA context with it.

Usage: python packed_mn_major_cases.py CASE...
"""
import sys

from case_worker import serve
from grouped_inputs import run_contiguous
from hopgemm.testing import m_grouped_packed_layout

SIZES = {"ragged": [1, 1, 200, 3, 0, 129, 64, 1, 500, 0], "straddling": [70, 0, 129, 1, 5, 255]}


def packed_case(sizes, k):
    return lambda: run_contiguous(m_grouped_packed_layout(sizes, trailing_rows=3), 4096, k, seed=len(sizes) + k,
                                  sfa_mn_major=True)


CASES = {f"{name}-{k}": packed_case(sizes, k) for name, sizes in SIZES.items() for k in (2048, 2112)}

if __name__ == "__main__":
    serve(CASES, sys.argv[1:],
          label=lambda name: f"tests/gpu/test_grouped_gemm_edges.py::test_packed_layout_with_mn_major_sfa[{name}]")
