"""The kernel variants the heuristics can pick (tests/gpu/kernel_variants.py), on the CPU: the enumeration covers every
op family and the pairings the issue found unexecuted, and each variant forced by name on its small execution problem
is exactly that variant, so the GPU test (tests/gpu/test_kernel_variants.py) runs every kernel the ops can pick."""
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "gpu"))

import hopgemm  # noqa: E402
from kernel_variants import (  # noqa: E402
    TUNABLE,
    enumerate_kernels,
    execution_problem,
    forced_config,
    kernels_to_run,
    tile_key,
    variant_key,
)


@pytest.fixture(scope="module")
def kernels():
    return enumerate_kernels()


def test_enumeration_covers_every_op_family_and_pairing(kernels):
    assert {k.op for k in kernels} == {"gemm", "m_grouped_ids", "m_grouped_ranges", "k_grouped"}
    fields = [k.fields for k in kernels]
    # The pairings issue 29 found compiled but never executed: B-sharing pairs on group ids, A-sharing pairs on row
    # ranges; and split-K, both recipes, every consumer schedule and tile height.
    assert any(k.op == "m_grouped_ids" and k.fields["cluster_m"] == 2 for k in kernels)
    assert any(k.op == "m_grouped_ranges" and k.fields["cluster_n"] == 2 for k in kernels)
    assert any(f["k_splits"] > 1 for f in fields)
    assert {f["recipe"] for f in fields} == {0, 1}
    for flag in ("promote_overlap", "d_in_stage", "sfb_regs", "sf_chunks"):
        assert any(f[flag] for f in fields), flag
    assert {f["block_m"] for f in fields} >= {64, 128, 192, 256}
    assert len({k.config for k in kernels}) == len(kernels)


def test_runs_hold_every_variant_and_every_tile_of_every_layout(kernels):
    runs = kernels_to_run(kernels)
    assert {variant_key(k.fields) for k in runs} == {variant_key(k.fields) for k in kernels}
    assert {tile_key(k.fields) for k in runs} == {tile_key(k.fields) for k in kernels}
    assert len({k.config for k in runs}) == len(runs) < len(kernels)


def test_each_kernel_forced_on_its_execution_problem_is_that_kernel(kernels):
    for k in kernels:
        assert forced_config(k) == k.fields, k.describe()


def test_execution_problems_have_odd_tile_counts_and_enough_k(kernels):
    for k in kernels:
        f, spec = k.fields, execution_problem(k)
        assert spec["overrides"] == dict({name: f[name] for name in TUNABLE},
                                         num_sms=7 * f["cluster_m"] * f["cluster_n"])
        if spec["op"] != "m_grouped_ids" and spec["op"] != "m_grouped_ranges":
            assert (-(-spec["m"] // f["block_m"])) % 2 == 1 and (-(-spec["n"] // f["block_n"])) % 2 == 1
        if spec["op"] == "gemm":
            k_blocks, splits = -(-spec["k"] // 128), f["k_splits"]
            assert spec["k"] % 128 != 0 and k_blocks >= 3 * splits
            assert (splits - 1) * -(-k_blocks // splits) < k_blocks  # no empty split (the op refuses those)
            assert not f["sfb_regs"] or k_blocks > 32


def test_config_hook_rejects_unknown_names_and_invalid_results():
    with pytest.raises(ValueError, match="unknown or fixed"):
        hopgemm._C._fp8_gemm_config("gemm", 128, 256, 512, overrides={"recipe": 1})
    with pytest.raises(ValueError, match="invalid config"):
        hopgemm._C._fp8_gemm_config("gemm", 128, 256, 512, overrides={"block_n": 12})
    with pytest.raises(ValueError, match="split without k-blocks"):
        hopgemm._C._fp8_gemm_config("gemm", 128, 256, 3136, overrides={"k_splits": 8})  # 25 k-blocks: 7 x 4 >= 25
    with pytest.raises(ValueError, match="op must be"):
        hopgemm._C._fp8_gemm_config("dense", 128, 256, 512)
    with pytest.raises(ValueError, match="unknown or fixed"):
        hopgemm._C._set_grouped_config_overrides({"grouping": 1})
    hopgemm._C._set_grouped_config_overrides({})
    with pytest.raises(ValueError, match="lacks"):
        hopgemm._C._precompile_fp8_gemm_configs([{"block_m": 128}])
