"""hopgemm against DeepGEMM's public API, read from the anchor's source (tests/python/data/deepgemm_api.json, written by
scripts/gen_deepgemm_api.py from ../shared/anchor/deepgemm-54e2261.tgz; regenerated and compared here wherever the
tarball is at hand).

Every public name of deep_gemm, deep_gemm.testing and deep_gemm.utils is either in hopgemm's namespace of the same
place, with a signature that binds every DeepGEMM call the same way, or listed with its reason under "Absent" in
docs/MIGRATION.md. "Binds the same way": DeepGEMM's parameters are hopgemm's first parameters, same names, same
kinds, same defaults (a pybind11 parameter without py::arg, positional-only and unnamed, only needs a positional
slot); hopgemm's further parameters all have defaults; and where hopgemm gives a default to a parameter DeepGEMM
requires, RELAXED says why.
"""
import ast
import importlib.util
import inspect
import json
import os
import re
import sys

import pytest

import hopgemm

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
API_FILE = os.path.join(ROOT, "tests", "python", "data", "deepgemm_api.json")
MIGRATION = os.path.join(ROOT, "docs", "MIGRATION.md")

with open(API_FILE) as _f:
    API = json.load(_f)

NAMESPACES = {"deep_gemm": hopgemm, "deep_gemm.testing": hopgemm.testing, "deep_gemm.utils": hopgemm.utils}

# (name, parameter) -> why hopgemm has a default where DeepGEMM requires the argument. Every DeepGEMM call still binds
# the same; only a call DeepGEMM refuses (the argument left out) means something here.
_OLDER_KEYWORD = "hopgemm's older keyword for the same argument may be given instead"
_QUANTISER = "hopgemm's quantisers default to FP32 scales, as its callers and torch ops have always called them"
RELAXED = {
    ("m_grouped_fp8_gemm_nt_contiguous", "grouped_layout"): "m_indices= (DeepGEMM's older name) may be given instead",
    ("m_grouped_fp8_gemm_nn_contiguous", "grouped_layout"): "m_indices= (DeepGEMM's older name) may be given instead",
    ("m_grouped_bf16_gemm_nt_contiguous", "grouped_layout"): "m_indices= (DeepGEMM's older name) may be given instead",
    ("m_grouped_bf16_gemm_nn_contiguous", "grouped_layout"): "m_indices= (DeepGEMM's older name) may be given instead",
    ("k_grouped_fp8_gemm_nt_contiguous", "ks_cpu"): _OLDER_KEYWORD + " (ks=)",
    ("k_grouped_fp8_gemm_nt_contiguous", "grouped_layout"): _OLDER_KEYWORD + " (ks_tensor=)",
    ("k_grouped_fp8_gemm_tn_contiguous", "ks_cpu"): _OLDER_KEYWORD + " (ks=)",
    ("k_grouped_fp8_gemm_tn_contiguous", "grouped_layout"): _OLDER_KEYWORD + " (ks_tensor=)",
    ("k_grouped_bf16_gemm_tn_contiguous", "ks_cpu"): _OLDER_KEYWORD + " (ks=)",
    ("k_grouped_bf16_gemm_tn_contiguous", "grouped_layout"): _OLDER_KEYWORD + " (ks_tensor=)",
    ("per_token_cast_to_fp8", "use_ue8m0"): _QUANTISER,
    ("per_block_cast_to_fp8", "use_ue8m0"): _QUANTISER,
    ("per_channel_cast_to_fp8", "use_ue8m0"): _QUANTISER,
}
# The aliases DeepGEMM binds under both names: those without a Python wrapper of their own share their signature.
ALIASES = {
    "fp8_m_grouped_gemm_nt_masked": "m_grouped_fp8_gemm_nt_masked",
    "m_grouped_fp8_fp4_gemm_nt_contiguous": "m_grouped_fp8_gemm_nt_contiguous",
}


def public_names(module):
    return sorted(n for n, e in API["namespaces"][module].items() if e["kind"] != "external")


def _nb_parameters(fn):
    """A nanobind function's parameters from its first overload's signature line."""
    signature, _, defaults = fn.__nb_signature__[0]
    text = re.sub(r"\\(\d+)", lambda m: f"__default{m.group(1)}", signature.split(" -> ")[0])
    args = ast.parse(text + ": pass").body[0].args
    positional = args.posonlyargs + args.args
    padded = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    out = []
    for i, (arg, default) in enumerate(zip(positional, padded)):
        kind = "positional_only" if i < len(args.posonlyargs) else "positional_or_keyword"
        p = {"name": arg.arg, "kind": kind}
        if default is not None:
            p["default"] = defaults[int(default.id[len("__default"):])]
        out.append(p)
    for arg in args.kwonlyargs:
        out.append({"name": arg.arg, "kind": "keyword_only", "default": None})
    return out


def hopgemm_parameters(obj):
    """[{name, kind, default (the object; absent when required)}] of a hopgemm function, nanobind function or class."""
    if hasattr(obj, "__nb_signature__"):
        return _nb_parameters(obj)
    out = []
    for p in inspect.signature(obj).parameters.values():
        entry = {"name": p.name, "kind": p.kind.name.lower()}
        if p.default is not p.empty:
            entry["default"] = p.default
        out.append(entry)
    return out


def _same_default(deepgemm_text, value):
    if deepgemm_text.startswith("torch."):
        # A torch dtype default: the same object, or its name (torch-free hopgemm spells dtype defaults as names, which
        # its ops take as well as the torch dtypes).
        torch, name = sys.modules.get("torch"), deepgemm_text.split(".", 1)[1]
        return value == name or (torch is not None and value is getattr(torch, name))
    expected = ast.literal_eval(deepgemm_text)
    return type(expected) is type(value) and expected == value


def signature_mismatches(name, deepgemm, ours):
    """What keeps a call written for DeepGEMM's `deepgemm` parameters from binding the same way to `ours` (the
    parameters of hopgemm's function `name`)."""
    problems = []
    dg = [p for p in deepgemm if p["kind"] not in ("var_positional", "var_keyword")]
    if len(ours) < len(dg):
        return [f"{len(dg)} parameters in DeepGEMM, {len(ours)} here"]
    for i, (d, h) in enumerate(zip(dg, ours)):
        if d["name"] is None:  # pybind11 without py::arg: positional-only, unnamed, required
            if h["kind"] not in ("positional_only", "positional_or_keyword"):
                problems.append(f"parameter {i} must be positional, is {h['kind']} {h['name']}")
            continue
        if (h["name"], h["kind"]) != (d["name"], d["kind"]):
            problems.append(f"parameter {i}: DeepGEMM's {d['kind']} {d['name']!r}, here {h['kind']} {h['name']!r}")
            continue
        if "default" in d:
            if "default" not in h:
                problems.append(f"{d['name']}: DeepGEMM's default {d['default']}, required here")
            elif not _same_default(d["default"], h["default"]):
                problems.append(f"{d['name']}: DeepGEMM's default {d['default']}, here {h['default']!r}")
        elif "default" in h and (name, d["name"]) not in RELAXED:
            problems.append(f"{d['name']}: required in DeepGEMM, defaults to {h['default']!r} here (not in RELAXED)")
    for h in ours[len(dg):]:
        if h["kind"] not in ("var_positional", "var_keyword") and "default" not in h:
            problems.append(f"{h['name']}: hopgemm's own parameter must have a default")
    return problems


def migration_absent_names():
    """The backticked names of the first column of docs/MIGRATION.md's "Absent" table."""
    with open(MIGRATION) as f:
        text = f.read()
    section = text.split("\n## Absent", 1)[1].split("\n## ", 1)[0]
    names = set()
    for line in section.splitlines():
        if line.startswith("|") and not line.startswith("|---"):
            names.update(re.findall(r"`([\w.]+)`", line.split("|")[1]))
    return names


# ---- the tests ------------------------------------------------------------------------------------------------------

def test_api_file_is_the_generators_output_for_the_anchor():
    spec = importlib.util.spec_from_file_location("gen_deepgemm_api", os.path.join(ROOT, "scripts",
                                                                                    "gen_deepgemm_api.py"))
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    with open(API_FILE) as f:
        text = f.read()
    assert gen.render(json.loads(text)) == text  # written by the script, untouched by hand
    assert API["anchor"] == "deepgemm-54e2261.tgz" and API["generated_by"] == "scripts/gen_deepgemm_api.py"
    tarball = gen.find_tarball()
    if tarball is not None:  # the developers' machines and the GPU machine; CI's clone has only the file
        assert gen.render(gen.generate(tarball)) == text, "stale: run python scripts/gen_deepgemm_api.py"


def test_the_anchors_public_names():
    # What the generator makes of DeepGEMM 54e2261: a regression test of the resolver (import *, aliases, submodules).
    names = public_names("deep_gemm")
    assert API["num_public_names"] == len(names) == 83
    assert {"fp8_gemm_nt", "m_grouped_fp8_fp4_gemm_nt_masked", "fp8_m_grouped_gemm_nt_masked", "SymmBuffer",
            "per_token_cast_to_fp4", "get_k_alignment_for_contiguous_layout", "testing", "utils", "math"} <= set(names)
    assert "torch" not in names and "os" not in names and "Tuple" not in names
    k_grouped = API["namespaces"]["deep_gemm"]["k_grouped_fp8_gemm_nt_contiguous"]["params"]
    assert [p["name"] for p in k_grouped][3:5] == ["ks_cpu", "grouped_layout"]
    assert k_grouped[6] == {"name": "recipe", "kind": "positional_or_keyword", "default": "(1, 1, 128)"}
    assert len(API["namespaces"]["deep_gemm"]["set_block_size_multiple_of"]["params"]) == 1


@pytest.mark.parametrize("module", sorted(NAMESPACES))
def test_every_deepgemm_name_is_here_or_listed_absent(module):
    ours = NAMESPACES[module]
    missing = {n for n in public_names(module) if not hasattr(ours, n)}
    qualified = {n if module == "deep_gemm" else f"{module.split('.', 1)[1]}.{n}" for n in missing}
    prefix = module.split(".", 1)[1] + "." if "." in module else ""
    absent = {n for n in migration_absent_names() if ("." in n) == bool(prefix) and n.startswith(prefix)}
    assert qualified == absent, (
        f"{module}: names missing here but not listed under 'Absent' in docs/MIGRATION.md: {sorted(qualified - absent)}; "
        f"listed but present: {sorted(absent - qualified)}")


@pytest.mark.parametrize("module,name", [(m, n) for m in sorted(NAMESPACES) for n in public_names(m)
                                         if API["namespaces"][m][n]["kind"] in ("function", "class")])
def test_signature_binds_deepgemm_calls_the_same_way(module, name):
    ours = getattr(NAMESPACES[module], name, None)
    if ours is None:
        assert name in migration_absent_names(), f"{name} is neither here nor listed absent"
        return
    entry = API["namespaces"][module][name]
    assert inspect.isclass(ours) == (entry["kind"] == "class"), name
    problems = signature_mismatches(getattr(ours, "__name__", name), entry["params"], hopgemm_parameters(ours))
    assert not problems, f"{module}.{name} ({entry['origin']}): " + "; ".join(problems)


def test_aliases_are_the_same_objects():
    for alias, target in ALIASES.items():
        assert getattr(hopgemm, alias) is getattr(hopgemm, target)
    for name in ("fp8_gemm_nt", "fp8_gemm_nn", "fp8_gemm_tn", "fp8_gemm_tt"):
        assert getattr(hopgemm, name.replace("fp8_", "fp8_fp4_", 1)) is getattr(hopgemm, name)


def test_relaxed_entries_are_all_used():
    for name, param in RELAXED:
        dg = {p["name"]: p for p in API["namespaces"]["deep_gemm"][name]["params"]}
        assert param in dg and "default" not in dg[param], (name, param)
        ours = {p["name"]: p for p in hopgemm_parameters(getattr(hopgemm, name))}
        assert "default" in ours[param], (name, param)


def test_public_name_count():
    have = [n for n in public_names("deep_gemm") if hasattr(hopgemm, n)]
    total = len(public_names("deep_gemm"))
    print(f"hopgemm has {len(have)} of DeepGEMM's {total} public names")
    assert len(have) >= 75
    # The count the documents state is this one.
    with open(MIGRATION) as f:
        assert f"hopgemm has {len(have)} of the {total}." in f.read()
    with open(os.path.join(ROOT, "README.md")) as f:
        assert f"({len(have)} of DeepGEMM's {total} public names" in f.read()
