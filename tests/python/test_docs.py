"""The user-facing documents say what is true of this checkout (issue 32, item 6): every results file they cite is in
the repository, every headline figure names its card, date and file, they cite no file a user does not have
(`../shared/`, the developers' machines), the kernel count the quick start promises is what `hopgemm precompile`
plans, and the one-line description of the project (pyproject, the package docstring, hopgemm.hpp) names the op
families the package has."""
import os
import re
import subprocess
import sys

import pytest

import hopgemm

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RESULTS = os.path.join(ROOT, "bench", "results")

# What a user reads: the README, the user docs, the examples, the package's own sources.
USER_DOCS = ["README.md"] + [os.path.join("docs", name) for name in
                             ("API.md", "API_REFERENCE.md", "ARCHITECTURE.md", "MIGRATION.md", "PERFORMANCE.md",
                              "RELIABILITY.md")]


def read(path):
    with open(os.path.join(ROOT, path)) as f:
        return f.read()


def user_files():
    files = list(USER_DOCS)
    for folder in ("examples", os.path.join("python", "hopgemm")):
        for dirpath, _, names in os.walk(os.path.join(ROOT, folder)):
            files += [os.path.relpath(os.path.join(dirpath, n), ROOT) for n in names
                      if n.endswith((".py", ".cpp", ".md", ".txt", ".pyi"))]
    return files


def cited_results(text):
    """The results files a text cites in backticks: `bench/results/NAME` or a bare NAME of that folder's form
    (card or cpu, a date, ...), with `{a,b}` alternatives expanded; templates (`<gpu>-<date>...`) left out."""
    names = []
    for token in re.findall(r"`([^`\s]+)`", text):
        token = token.removeprefix("bench/results/")
        if not re.match(r"^(h100|h200|cpu)[\w.-]*-20\d\d-\d\d-\d\d", token):
            continue
        alternatives = re.search(r"\{([^}]*)\}", token)
        if alternatives:
            names += [token.replace(alternatives.group(0), a) for a in alternatives.group(1).split(",")]
        else:
            names.append(token)
    return names


@pytest.mark.parametrize("doc", USER_DOCS + [os.path.join("docs", "DESIGN_NOTES.md")])
def test_every_cited_results_file_is_in_the_repository(doc):
    cited = cited_results(read(doc))
    present = os.listdir(RESULTS)
    # A name without its extension stands for the run's files (its .json and .txt).
    missing = [name for name in cited if name not in present and not any(f.startswith(name + ".") for f in present)]
    assert not missing, f"{doc} cites results files that bench/results/ does not have: {missing}"


TOP_FOLDERS = ("bench/", "cmake/", "docs/", "examples/", "include/", "python/", "scripts/", "src/", "tests/", "tools/")


@pytest.mark.parametrize("doc", USER_DOCS)
def test_every_cited_repository_path_and_test_exists(doc):
    """Files and folders of this repository the documents name (`tests/gpu/sanitize.sh`, `src/heuristics/`, ...), and
    the GoogleTest tests they name as methods (`Suite.Name`), exist: a method whose tests were renamed or replaced
    must say what measures it now."""
    text = read(doc)
    missing = []
    for token in set(re.findall(r"`([^`\s]+)`", text)):
        path = token.split(":", 1)[0].rstrip(".,")
        if not path.startswith(TOP_FOLDERS) or re.search(r"[<>*${}]|\.\.\.", path):
            continue  # not a path of the checkout, or a pattern / template
        if not os.path.exists(os.path.join(ROOT, path)):
            missing.append(path)
    tests = ""
    for dirpath, _, names in os.walk(os.path.join(ROOT, "tests")):
        for name in names:
            if name.endswith(".cpp"):
                with open(os.path.join(dirpath, name)) as f:
                    tests += f.read()
    for suite, name in re.findall(r"`([A-Z]\w+)\.([A-Z]\w+)`", text):
        if not re.search(rf"TEST(_F|_P)?\(\s*{suite},\s*{name}\s*\)", tests):
            missing.append(f"{suite}.{name}")
    assert not missing, f"{doc} names what the repository does not have: {sorted(missing)}"


def test_the_readme_headline_figures_name_card_date_and_file():
    text = read("README.md")
    table = text.split("| what | figure | card, date, commit | file |", 1)[1].split("\n\n", 1)[0]
    rows = [line for line in table.strip().splitlines()[1:] if line.startswith("|")]
    assert len(rows) >= 5, table
    for row in rows:
        what, figure, provenance, files = [cell.strip() for cell in row.strip("|").split("|")]
        assert re.search(r"\b(H100|H200)\b", provenance) and re.search(r"\b20\d\d-\d\d-\d\d\b", provenance), row
        assert re.search(r"\b[0-9a-f]{7}\b", provenance), f"no commit: {row}"
        assert cited_results(files), f"no results file: {row}"


def test_no_file_a_user_does_not_have():
    for path in user_files():
        text = read(path)
        for pattern in ("../shared", "/work/"):
            assert pattern not in text, f"{path} cites {pattern}..., which is not in a user's checkout"


def test_the_quick_start_kernel_count_is_what_precompile_plans():
    """The README's `./scripts/bench.sh` line promises the deepseek-v3 suite's kernel count (without a GPU it
    precompiles them); the count the command plans today must be that number."""
    promised = re.search(r"--suite deepseek-v3 \((\d+) kernels for sm_90a", read("README.md"))
    assert promised, "the quick start names no kernel count for the deepseek-v3 suite"
    command = os.path.join(os.path.dirname(sys.executable), "hopgemm")
    out = subprocess.run([command, "precompile", "--suite", "deepseek-v3", "--dry-run"], capture_output=True,
                         text=True, timeout=120, check=True).stdout
    planned = re.search(r"(\d+) distinct kernels", out)
    assert planned, out
    assert planned.group(1) == promised.group(1), out


def test_one_description_naming_what_exists():
    pyproject = re.search(r'^description = "([^"]*)"', read("pyproject.toml"), re.M).group(1)
    docstring = hopgemm.__doc__.split("\n\n", 1)[0].removeprefix("hopgemm: ")
    header = read(os.path.join("include", "hopgemm", "hopgemm.hpp")).split("\n#include", 1)[0]
    header = " ".join(line.removeprefix("//").strip() for line in header.splitlines()[1:]).removeprefix("hopgemm: ")
    families = {"FP8": hasattr(hopgemm, "fp8_gemm_nt"), "BF16": hasattr(hopgemm, "bf16_gemm_nt"),
                "indexer": hasattr(hopgemm, "fp8_paged_mqa_logits"), "MoE grouped": hasattr(hopgemm,
                                                                                         "m_grouped_fp8_gemm_nt_masked")}
    for where, text in (("pyproject.toml", pyproject), ("hopgemm.__doc__", docstring), ("hopgemm.hpp", header)):
        for family, exists in families.items():
            assert (family in text) == exists, f"{where} {'omits' if exists else 'claims'} {family}: {text!r}"
