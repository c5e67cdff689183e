"""docs/API_REFERENCE.md is generated from the code (scripts/gen_api_reference.py): it must list exactly the public
names and headers there are now. Compared by headings, not text, so that a nanobind or Python version that prints a
signature differently does not fail it; a new or removed name does ("run python scripts/gen_api_reference.py")."""
import importlib.util
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _headings(text):
    return [line for line in text.splitlines() if re.match(r"#{2,3} ", line)]


def test_api_reference_lists_every_public_name_and_header():
    spec = importlib.util.spec_from_file_location("gen_api_reference",
                                                  os.path.join(ROOT, "scripts", "gen_api_reference.py"))
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    with open(os.path.join(ROOT, "docs", "API_REFERENCE.md")) as f:
        committed = _headings(f.read())
    now = _headings(gen.render())
    assert committed == now, ("docs/API_REFERENCE.md is stale (run python scripts/gen_api_reference.py): missing "
                              f"{sorted(set(now) - set(committed))}, gone {sorted(set(committed) - set(now))}")
    assert "### `hopgemm.fp8_gemm_nt`" in now and "### `hopgemm/gemm.hpp`" in now
