"""Every FP8 GEMM kernel variant the heuristics can pick (tests/gpu/kernel_variants.py: the distinct configurations over
a grid of every op family, both recipes, 132 and 114 SMs, and the tuning table; one kernel of each code path, together
holding every tile shape of every layout) runs once against the float64 reference of the dequantised inputs, forced by
name on a small problem of its own op and scale layouts: odd tile counts (pairs with a phantom partner), group-id pairs
of two groups, of a group and padding and of a group and an invalid id, psum and packed groups straddling tiles, masked
groups, and a K-grouped walk that wraps each CTA's ring of descriptor slots. The selected kernels are compiled first, in
parallel, through the disk cache, then run in worker processes (tests/gpu/kernel_variant_cases.py, case_worker.py): a
kernel that faults or hangs fails alone.

Figures: with HOPGEMM_RELIABILITY_DIR set, kernel_variants.json there (kernels, variants and layout tiles pickable and
executed correctly).
Run: pytest tests/gpu/test_kernel_variants.py
"""
import json
import os
import sys
import tempfile

import pytest

from sm90_torch import require_torch_on_sm90

require_torch_on_sm90("CUDA tensors")

import hopgemm  # noqa: E402
from case_worker import run_cases  # noqa: E402
from kernel_variants import enumerate_kernels, kernel_test_id, kernels_to_run, tile_key, variant_key  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
KERNELS = enumerate_kernels()
RUNS = kernels_to_run(KERNELS)


def write_figures(results):
    """kernel_variants.json in $HOPGEMM_RELIABILITY_DIR (where set): how many kernels, variants and layout tiles the
    heuristics can pick and how many ran correctly."""
    ok = [k for k in RUNS if results.get(kernel_test_id(k)) == "ok"]
    figures = {}
    for name, key in (("kernels", lambda k: k.config), ("variants", lambda k: variant_key(k.fields)),
                      ("layout_tiles", lambda k: tile_key(k.fields))):
        pickable, executed = {key(k) for k in KERNELS}, {key(k) for k in ok}
        figures[name] = {"pickable": len(pickable), "executed": len(executed & pickable)}
    by_op = {}
    for k in KERNELS:
        by_op.setdefault(k.op, set()).add(variant_key(k.fields))
    ok_variants = {variant_key(k.fields) for k in ok}
    figures["variants_by_op"] = {op: {"pickable": len(keys), "executed": len(keys & ok_variants)}
                                 for op, keys in by_op.items()}
    figures["failed"] = {name: why for name, why in results.items() if why != "ok"}
    print(f"kernel variants executed / pickable: { {n: figures[n] for n in ('kernels', 'variants', 'layout_tiles')} }")
    out = os.environ.get("HOPGEMM_RELIABILITY_DIR")
    if out:
        with open(os.path.join(out, "kernel_variants.json"), "w") as f:
            json.dump(figures, f, indent=1)


@pytest.fixture(scope="module")
def results(request):
    """{test id: "ok" | why it failed} for the kernels this session selected: compiled on all cores, then run."""
    selected = [item.callspec.params["kernel"] for item in request.session.items
                if getattr(item, "callspec", None) is not None and "kernel" in item.callspec.params]
    report = hopgemm._C._precompile_fp8_gemm_configs([k.fields for k in selected])
    assert not report.errors, report.errors[:5]
    print(f"kernel variants: {len(selected)} of {len(RUNS)} kernels to run ({len(KERNELS)} pickable) compiled in "
          f"{report.seconds:.1f} s ({report.num_compiled} compiled, {report.num_cached} cached)")
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump({kernel_test_id(k): k.fields for k in selected}, f)
    try:
        out = run_cases([sys.executable, os.path.join(HERE, "kernel_variant_cases.py"), f.name],
                        [kernel_test_id(k) for k in selected], cwd=HERE)
    finally:
        os.unlink(f.name)
    if len(selected) == len(RUNS):
        write_figures(out)
    return out


@pytest.mark.parametrize("kernel", RUNS, ids=[kernel_test_id(k) for k in RUNS])
def test_kernel_against_reference(kernel, results):
    assert results[kernel_test_id(kernel)] == "ok", results[kernel_test_id(kernel)]
