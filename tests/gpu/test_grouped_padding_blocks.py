"""Whole padding blocks of the group-ids contiguous layout (m_grouped_fp8_gemm_{nt,nn}_contiguous, grouped_layout
holding -1, or an id outside [0, G), over a whole aligned block): DeepGEMM writes zeros there, so does hopgemm by
default (stores only: no loads, no MMA); zero_padding_blocks=False leaves those rows untouched. Every computed row is
checked element-wise against the float64 reference (hopgemm.testing.assert_m_grouped_fp8_gemm_close), every zeroed row
is exactly 0, every untouched one still NaN; with single CTAs and with both kinds of CTA pair, whose two tiles may be
one padding and one group (the padding CTA then computes for its peer's sake and stores zeros).

Run: pytest tests/gpu/test_grouped_padding_blocks.py  (needs torch on an SM90 GPU and the hopgemm package)."""
import pytest

from sm90_torch import require_torch_on_sm90

torch = require_torch_on_sm90("the grouped GEMMs' padding blocks")
hopgemm = pytest.importorskip("hopgemm", reason="the hopgemm package is not installed")

from grouped_inputs import run_contiguous  # noqa: E402
from hopgemm.testing import m_grouped_ids_layout  # noqa: E402

# Padding blocks at the start, between groups, pairs of them, one beside a group (a B-sharing pair split between
# padding and a group), out-of-range ids, and at the end; groups of 0, 1, 127, 129 and 256 rows.
RUNS = [(-1, 128), 0, 1, (-1, 256), 127, (6, 128), 129, (-1, 128), 256, (-7, 128), 1, (-1, 128)]
PAIRS = [None, dict(block_m=128, block_n=128, cluster_m=2, cluster_n=1),
         dict(block_m=128, block_n=128, cluster_m=1, cluster_n=2), dict(block_m=64, block_n=128, cluster_m=1,
                                                                        cluster_n=1)]


def _with_config(overrides, fn):
    if overrides:
        hopgemm._C._set_grouped_config_overrides(overrides)
    try:
        return fn()
    finally:
        hopgemm._C._set_grouped_config_overrides({})


@pytest.mark.parametrize("zero_padding_blocks", [True, False])
@pytest.mark.parametrize("overrides", PAIRS, ids=["heuristics", "b_sharing_pairs", "a_sharing_pairs", "block_m64"])
def test_padding_blocks_zeroed_or_untouched(zero_padding_blocks, overrides):
    layout = m_grouped_ids_layout(RUNS)  # 6 groups: ids 6 and -7 are out of range
    assert layout.zeroed, "the case has padding blocks"
    _with_config(overrides, lambda: run_contiguous(layout, 1024, 512, seed=11, zero_padding_blocks=zero_padding_blocks))


@pytest.mark.parametrize("zero_padding_blocks", [True, False])
def test_all_padding(zero_padding_blocks):
    layout = m_grouped_ids_layout([(-1, 512)], num_groups=2)
    d, _ = run_contiguous(layout, 2048, 256, seed=12, zero_padding_blocks=zero_padding_blocks)
    assert bool((d == 0).all()) if zero_padding_blocks else bool(d.isnan().all())


def test_deepgemm_default_is_zeros_and_the_keyword_is_hopgemms():
    import inspect

    params = inspect.signature(hopgemm.m_grouped_fp8_gemm_nt_contiguous).parameters
    assert params["zero_padding_blocks"].default is True
    assert params["zero_padding_blocks"].kind is inspect.Parameter.KEYWORD_ONLY
