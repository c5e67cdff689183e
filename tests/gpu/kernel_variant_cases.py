"""Worker of tests/gpu/test_kernel_variants.py (tests/gpu/case_worker.py): runs kernels forced by name on their
execution problems (tests/gpu/kernel_variants.py) against the float64 reference, one case per kernel, so that a kernel
that faults fails alone.

Usage: python kernel_variant_cases.py KERNELS.json NAME...   (KERNELS.json: {name: config fields, ...})
"""
import json
import math
import sys

import torch

import hopgemm
from case_worker import serve
from fp8_gemm_inputs import check, make_inputs, poisoned
from grouped_inputs import run_contiguous, run_k_grouped, run_masked
from hopgemm.testing import m_grouped_ids_layout, m_grouped_packed_layout, m_grouped_psum_layout
from hopgemm.utils import align
from kernel_variants import (
    IDS_RUNS,
    K_GROUPED_KS,
    MASKED_M,
    PACKED_SIZES,
    PSUM_SIZES,
    Kernel,
    execution_problem,
    forced_config,
)


def rows_aligned(sf):
    """sf [rows, cols] row-major with its rows padded to 16 bytes (TMA-loadable: what sf_chunks needs)."""
    rows, cols = sf.shape
    buf = torch.zeros(rows, align(cols, 4), device="cuda", dtype=sf.dtype)
    buf[:, :cols] = sf
    return buf[:, :cols]


def scales_arg(sf, row_major):
    """Per-row scales as the kernel's layout wants them: row-major in TMA-loadable rows, or MN-major TMA-aligned."""
    return rows_aligned(sf) if row_major else hopgemm.get_mn_major_tma_aligned_tensor(sf)


def run_gemm(spec, seed):
    """The dense GEMM of an execution problem (kernel_variants.execution_problem), forced and checked."""
    m, n, k = spec["m"], spec["n"], spec["k"]
    recipe_1d1d = spec["recipe_1d1d"]
    a8, sfa, b8, sfb = make_inputs(m, n, k, recipe_1d1d, seed=seed)
    sfa_arg = scales_arg(sfa, spec["sfa_row_major"])
    sfb_arg = scales_arg(sfb, spec["sfb_row_major"]) if recipe_1d1d else sfb
    dtype = torch.float32 if spec["fp32_out"] else torch.bfloat16
    c = None
    if spec["accumulate"]:
        c = (torch.randn(m, n, device="cuda") * 4).to(dtype)
        d = c.clone()
    else:
        d = poisoned(m, n, dtype)
    hopgemm._C._fp8_gemm_nt_with_config((a8, sfa_arg), (b8, sfb_arg), d, c=d if c is not None else None,
                                        recipe=(1, 1, 128) if recipe_1d1d else (1, 128, 128),
                                        overrides=spec["overrides"])
    check(d, a8, sfa, b8, sfb, recipe_1d1d, c=c)


def run_grouped(kernel, spec, seed):
    """The grouped GEMM of an execution problem, forced through the per-thread overrides and checked: group ids; psum,
    masked and packed ranges (packed last: its groups start inside tiles); or K groups."""
    op, n, k = spec["op"], spec["n"], spec["k"]
    hopgemm._C._set_grouped_config_overrides(spec["overrides"])
    try:
        if op == "m_grouped_ids":
            # The group-ids layout needs tile rows that divide the alignment.
            alignment = math.lcm(128, kernel.fields["block_m"])
            hopgemm.set_mk_alignment_for_contiguous_layout(alignment)
            try:
                runs = [(r[0], alignment) if isinstance(r, tuple) else r for r in IDS_RUNS]
                layout = m_grouped_ids_layout(runs, alignment=alignment, num_groups=7)
                run_contiguous(layout, n, k, seed, sfa_mn_major=not spec["sfa_row_major"])
            finally:
                hopgemm.set_mk_alignment_for_contiguous_layout(128)
        elif op == "m_grouped_ranges":
            mn_major = not spec["sfa_row_major"]
            layouts = [
                ("psum", lambda: run_contiguous(m_grouped_psum_layout(PSUM_SIZES, trailing_rows=64), n, k, seed,
                                                sfa_mn_major=mn_major)),
                ("masked", lambda: run_masked(MASKED_M, 256, n, k, expected_m=64, seed=seed + 2, guard_rows=64,
                                              sf_mn_major=mn_major)),
            ]
            # Packed groups start at any row, where MN-major sfa cannot come by TMA: that layout stages it by pointer,
            # which is another kernel (a row-major-scale one, enumerated by the grid's sfa_row_major problems and run
            # there), so a kernel taking MN-major sfa by TMA runs the layouts it serves: psum and masked.
            if not mn_major:
                layouts.append(("packed", lambda: run_contiguous(m_grouped_packed_layout(PACKED_SIZES, trailing_rows=7),
                                                                 n, k, seed + 1)))
            for name, run in layouts:
                try:
                    run()
                except Exception as e:  # noqa: BLE001: said which layout failed, as it was
                    raise type(e)(f"{name} layout: {e}") from e
        else:
            run_k_grouped(spec["m"], n, K_GROUPED_KS, seed, c_mode="aliased", sf_layout="aligned")
    finally:
        hopgemm._C._set_grouped_config_overrides({})


def run_kernel(kernel, seed):
    """The kernel forced on its execution problem, checked; the forced configuration first checked to be the kernel."""
    if forced_config(kernel) != kernel.fields:
        raise AssertionError(f"the forced configuration {forced_config(kernel)} is not the kernel {kernel.fields}")
    spec = execution_problem(kernel)
    if spec["op"] == "gemm":
        run_gemm(spec, seed)
    else:
        run_grouped(kernel, spec, seed)


def main(path, names):
    with open(path) as f:
        fields = json.load(f)
    kernels = {name: Kernel(tuple(sorted(fields[name].items())), ()) for name in names}
    seeds = {name: i for i, name in enumerate(sorted(fields))}
    serve({name: (lambda k=kernels[name], s=seeds[name]: run_kernel(k, s)) for name in names}, names,
          label=lambda name: f"tests/gpu/test_kernel_variants.py::test_kernel_against_reference[{name}]")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
