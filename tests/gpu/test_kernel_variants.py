"""Every FP8 GEMM kernel variant the heuristics can pick (tests/gpu/kernel_variants.py: the distinct configurations over
a grid of every op family, both recipes, 132 and 114 SMs, and the tuning table; one kernel of each code path, together
holding every tile shape of every layout) runs once against the float64 reference of the dequantised inputs, forced by
name on a small problem of its own op and scale layouts: odd tile counts
(pairs with a phantom partner), group-id pairs of two groups, of a group and padding and of a group and an invalid id,
psum and packed groups straddling tiles, masked groups, and a K-grouped walk that wraps each CTA's ring of descriptor
slots. Every kernel is compiled first, in parallel, through the disk cache.

Figures: with HOPGEMM_RELIABILITY_DIR set, kernel_variants.json there (kernels and variants pickable and executed).
Run: pytest tests/gpu/test_kernel_variants.py
"""
import json
import math
import os

import pytest

from sm90_torch import require_torch_on_sm90

torch = require_torch_on_sm90("CUDA tensors")

import hopgemm  # noqa: E402
from fp8_gemm_inputs import check, make_inputs, poisoned  # noqa: E402
from grouped_inputs import run_contiguous, run_k_grouped, run_masked  # noqa: E402
from hopgemm.testing import m_grouped_ids_layout, m_grouped_packed_layout, m_grouped_psum_layout  # noqa: E402
from hopgemm.utils import align  # noqa: E402
from kernel_variants import (  # noqa: E402
    IDS_RUNS,
    K_GROUPED_KS,
    MASKED_M,
    PACKED_SIZES,
    PSUM_SIZES,
    enumerate_kernels,
    execution_problem,
    forced_config,
    kernels_to_run,
    kernel_test_id,
    tile_key,
    variant_key,
)

KERNELS = enumerate_kernels()
RUNS = kernels_to_run(KERNELS)
EXECUTED = set()


@pytest.fixture(scope="module", autouse=True)
def compiled_kernels(request):
    """Every kernel selected to run compiled into the disk cache on all cores before the first runs; the figures
    written when the module is done."""
    selected = [item.callspec.params["kernel"] for item in request.session.items
                if getattr(item, "callspec", None) is not None and "kernel" in item.callspec.params]
    report = hopgemm._C._precompile_fp8_gemm_configs([k.fields for k in selected])
    assert not report.errors, report.errors[:5]
    print(f"kernel variants: {len(selected)} of {len(RUNS)} kernels to run ({len(KERNELS)} pickable) compiled in "
          f"{report.seconds:.1f} s ({report.num_compiled} compiled, {report.num_cached} cached)")
    yield
    ran = [k for k in RUNS if k in EXECUTED]
    figures = {}
    for name, key in (("kernels", lambda k: k.config), ("variants", lambda k: variant_key(k.fields)),
                      ("layout_tiles", lambda k: tile_key(k.fields))):
        pickable, executed = {key(k) for k in KERNELS}, {key(k) for k in ran}
        figures[name] = {"pickable": len(pickable), "executed": len(executed & pickable)}
    by_op = {}
    for k in KERNELS:
        by_op.setdefault(k.op, set()).add(variant_key(k.fields))
    figures["variants_by_op"] = {op: {"pickable": len(keys), "executed": len(keys & {variant_key(k.fields) for k in ran})}
                                 for op, keys in by_op.items()}
    print(f"kernel variants executed / pickable: {figures}")
    out = os.environ.get("HOPGEMM_RELIABILITY_DIR")
    if out:
        with open(os.path.join(out, "kernel_variants.json"), "w") as f:
            json.dump(figures, f, indent=1)


def rows_aligned(sf):
    """sf [rows, cols] row-major with its rows padded to 16 bytes (TMA-loadable: what sf_chunks needs)."""
    rows, cols = sf.shape
    buf = torch.zeros(rows, align(cols, 4), device="cuda", dtype=sf.dtype)
    buf[:, :cols] = sf
    return buf[:, :cols]


def scales_arg(sf, row_major):
    return rows_aligned(sf) if row_major else hopgemm.get_mn_major_tma_aligned_tensor(sf)


def run_gemm(spec, seed):
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
            run_contiguous(m_grouped_psum_layout(PSUM_SIZES, trailing_rows=64), n, k, seed, sfa_mn_major=mn_major)
            run_contiguous(m_grouped_packed_layout(PACKED_SIZES, trailing_rows=7), n, k, seed + 1,
                           sfa_mn_major=mn_major)
            run_masked(MASKED_M, 256, n, k, expected_m=64, seed=seed + 2, guard_rows=64, sf_mn_major=mn_major)
        else:
            run_k_grouped(spec["m"], n, K_GROUPED_KS, seed, c_mode="aliased", sf_layout="aligned")
    finally:
        hopgemm._C._set_grouped_config_overrides({})


@pytest.mark.parametrize("kernel", RUNS, ids=[kernel_test_id(k) for k in RUNS])
def test_kernel_against_reference(kernel):
    assert forced_config(kernel) == kernel.fields, "the forced configuration is not the kernel"
    spec = execution_problem(kernel)
    seed = RUNS.index(kernel)
    if spec["op"] == "gemm":
        run_gemm(spec, seed)
    else:
        run_grouped(kernel, spec, seed)
    EXECUTED.add(kernel)
