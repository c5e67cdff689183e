"""The GPU fuzzer's problems (tests/gpu/fuzz_ops.py), on the CPU: each is a function of (seed, family, index) alone,
so a printed seed and case rerun it; each is valid for its op (the shapes the ops accept); over 500 per family the
draws reach what the fuzzer claims to cover (every form and recipe, C modes, split-K-sized dense shapes, empty groups,
both scale layouts, every indexer variant)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "gpu"))

from fuzz_ops import FAMILIES, problem  # noqa: E402

N = 500


def problems(family, seed=29):
    return [problem(seed, f"{family}:{i}") for i in range(N)]


def test_problems_reproduce_from_seed_and_name_alone():
    for family in FAMILIES:
        assert problems(family)[:20] == problems(family)[:20]
        assert problems(family, seed=30)[:20] != problems(family)[:20]


def test_dense_problems_valid_and_covering():
    seen = set()
    for form in ("nt", "nn", "tn", "tt"):
        for p in problems(f"dense_{form}"):
            assert p["form"] == form and p["m"] >= 1 and p["n"] % 8 == 0 and p["k"] % 16 == 0 and p["n"] > 0
            assert p["c_mode"] == "none" or p["fp32_out"]
            assert not p["fp32_out"] or p["recipe_1d1d"]
            split_k_sized = p["m"] <= 192 and p["n"] <= 256 and p["k"] >= 1024
            seen.add((form, p["recipe_1d1d"], p["fp32_out"], p["c_mode"], split_k_sized))
    for form in ("nt", "nn", "tn", "tt"):
        for recipe_1d1d, fp32_out, c_mode in [(False, False, "none"), (True, False, "none"), (True, True, "none"),
                                              (True, True, "aliased"), (True, True, "distinct")]:
            assert any((form, recipe_1d1d, fp32_out, c_mode, s) in seen for s in (False, True))
        assert any(key[0] == form and key[4] for key in seen), f"{form}: no split-K-sized problem"


def test_grouped_problems_valid_and_covering():
    for kind in ("ids", "psum", "packed"):
        ps = problems(f"m_grouped_{kind}")
        assert all(p["n"] % 8 == 0 and p["k"] % 16 == 0 and all(s >= 0 for s in p["sizes"]) for p in ps)
        assert any(0 in p["sizes"] for p in ps) and {p["sfa_mn_major"] for p in ps} == {False, True}
    masked = problems("m_grouped_masked")
    assert all(0 <= m <= p["max_m"] and 1 <= p["expected_m"] <= p["max_m"] for p in masked for m in p["masked_m"])
    k_grouped = problems("k_grouped")
    assert all(k % 128 == 0 and k >= 0 and p["n"] % 4 == 0 for p in k_grouped for k in p["ks"])
    assert all(p["m"] % 4 == 0 for p in k_grouped if p["sf_layout"] == "mn")  # sf.T is TMA-aligned only then
    assert {p["c_mode"] for p in k_grouped} == {"aliased", "distinct", "none"}
    assert any(0 in p["ks"] for p in k_grouped) and {p["sf_layout"] for p in k_grouped} == {"mn", "aligned"}


def test_indexer_problems_cover_each_variant():
    prefill, paged = problems("mqa_logits"), problems("paged_mqa_logits")
    assert all(1 <= p["s"] <= p["s_kv"] for p in prefill)
    assert {p["ranges"] for p in prefill} == {"ragged", "causal"} and {p["bf16"] for p in prefill} == {False, True}
    for key in ("next_n", "lens_2d", "holes", "bf16", "clean"):
        assert len({p[key] for p in paged}) == 2, key
