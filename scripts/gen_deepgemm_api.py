#!/usr/bin/env python3
"""Writes tests/python/data/deepgemm_api.json: every public name of DeepGEMM's `deep_gemm`, `deep_gemm.testing` and
`deep_gemm.utils` with its parameters, read from the anchor's source (never imported: no GPU, no build).

    python scripts/gen_deepgemm_api.py [--tarball ../shared/anchor/deepgemm-54e2261.tgz] [--out FILE] [--check]

Python names are resolved the way the interpreter binds them (defs, classes, `from X import a`, `from X import *`
without __all__, `a = b`, and the submodule attributes that importing a submodule sets on its package); the ones bound
from the pybind11 extension `deep_gemm._C` are read from the `m.def(...)` / `m.attr(...)` statements of csrc/apis/:
parameter names from `py::arg("x")`, defaults from `= value`, and for a definition without py::arg its C++ parameter
count (pybind11 then makes them positional-only, named arg0, arg1, ...). tests/python/test_deepgemm_api.py compares
hopgemm's public signatures with this file; with --check (or in that test, where the tarball is at hand) the file is
regenerated and must be identical, so it stays what this script makes of the anchor.
"""
import argparse
import ast
import hashlib
import io
import json
import os
import re
import sys
import tarfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_TARBALL = os.path.join(os.path.dirname(ROOT), "shared", "anchor", "deepgemm-54e2261.tgz")
DEFAULT_OUT = os.path.join(ROOT, "tests", "python", "data", "deepgemm_api.json")
PACKAGE = "deep_gemm"
# The namespaces whose public names code written for DeepGEMM reaches: the package and the two helper modules.
NAMESPACES = ("deep_gemm", "deep_gemm.testing", "deep_gemm.utils")


def find_tarball(explicit=None):
    """The anchor tarball: --tarball, $HOPGEMM_DEEPGEMM_TARBALL, ../shared/anchor/ beside the checkout or /work/shared,
    or a carried .anchor/ in the checkout; None where none exists (CI's clean clone)."""
    candidates = [explicit, os.environ.get("HOPGEMM_DEEPGEMM_TARBALL"), DEFAULT_TARBALL,
                  "/work/shared/anchor/deepgemm-54e2261.tgz", os.path.join(ROOT, ".anchor", "deepgemm-54e2261.tgz")]
    for path in candidates:
        if path and os.path.isfile(path):
            return path
    return None


class Source:
    """The tarball's text files by path relative to the DeepGEMM checkout (its top folder stripped)."""

    def __init__(self, tarball):
        self.files = {}
        with open(tarball, "rb") as f:
            data = f.read()
        self.sha256 = hashlib.sha256(data).hexdigest()
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            for member in tar.getmembers():
                name = member.name.split("/", 1)[-1]
                if member.isfile() and name.endswith((".py", ".hpp", ".cpp", ".h")) and "third-party" not in name:
                    self.files[name] = tar.extractfile(member).read().decode("utf-8", "replace")

    def module_path(self, module):
        base = module.replace(".", "/")
        for path in (base + "/__init__.py", base + ".py"):
            if path in self.files:
                return path
        return None


# ---- the extension: m.def / m.attr in csrc/apis -------------------------------------------------------------------

def _split_top_level(text, angles=False):
    """Split at commas outside (), [], {} and string literals (and <> with `angles`: a C++ parameter list)."""
    opening, closing = ("([{<", ")]}>") if angles else ("([{", ")]}")
    parts, depth, current, quote = [], 0, [], None
    for ch in text:
        if quote:
            current.append(ch)
            if ch == quote:
                quote = None
            continue
        if ch in "\"'":
            quote = ch
        elif ch in opening:
            depth += 1
        elif ch in closing:
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append("".join(current).strip())
            current = []
            continue
        current.append(ch)
    if "".join(current).strip():
        parts.append("".join(current).strip())
    return parts


def _call_arguments(text, open_paren):
    """The text between text[open_paren] == '(' and its matching ')'."""
    depth = 0
    for i in range(open_paren, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return text[open_paren + 1:i]
    raise ValueError("unbalanced parentheses")


def _cpp_default(value):
    """A py::arg default as the Python value's repr."""
    value = value.strip()
    table = {"std::nullopt": "None", "false": "False", "true": "True", "torch::kFloat32": "torch.float32",
             "torch::kFloat": "torch.float32", "torch::kBFloat16": "torch.bfloat16"}
    if value in table:
        return table[value]
    m = re.fullmatch(r"std::make_tuple\((.*)\)", value)
    if m:
        return "(" + ", ".join(v.strip() for v in m.group(1).split(",")) + ")"
    if re.fullmatch(r"-?\d+", value):
        return value
    m = re.fullmatch(r'"([^"]*)"', value)
    if m:
        return repr(m.group(1))
    raise ValueError(f"unknown C++ default {value!r}")


def _cpp_parameter_count(source, function):
    """Parameters of the C++ function `function` as defined in csrc/ (for an m.def without py::arg)."""
    pattern = re.compile(r"^[ \t]*(?:[\w:<>,\s*&]+?[\s*&])?" + re.escape(function) + r"\s*\(",
                         re.MULTILINE)
    for path, text in sorted(source.files.items()):
        if not path.startswith("csrc/"):
            continue
        for m in pattern.finditer(text):
            args = _call_arguments(text, m.end() - 1)
            after = text[m.end() - 1 + len(args) + 2:].lstrip()
            if not after.startswith(("{", "->", "const")):
                continue
            return len(_split_top_level(args, angles=True)) if args.strip() else 0
    raise ValueError(f"C++ function {function} not found")


def extension_names(source):
    """name -> entry for every m.def / m.attr of the extension."""
    names = {}
    for path, text in sorted(source.files.items()):
        if not (path.startswith("csrc/apis/") or path == "csrc/python_api.cpp"):
            continue
        for m in re.finditer(r"\bm\.def\s*\(", text):
            line = text.count("\n", 0, m.start()) + 1
            args = _split_top_level(_call_arguments(text, m.end() - 1))
            name = ast.literal_eval(args[0])
            target = args[1]
            py_args = [a for a in args[2:] if a.startswith("py::arg")]
            params = []
            if py_args:
                for a in py_args:
                    am = re.fullmatch(r'py::arg\("(\w+)"\)(?:\s*=\s*(.+))?', a, re.DOTALL)
                    if not am:
                        raise ValueError(f"{path}:{line}: cannot read {a!r}")
                    param = {"name": am.group(1), "kind": "positional_or_keyword"}
                    if am.group(2) is not None:
                        param["default"] = _cpp_default(am.group(2))
                    params.append(param)
            else:
                if target.startswith("["):  # a lambda: its own parameter list
                    lam = target[target.index("("):]
                    inner = _call_arguments(lam, 0)
                    count = len(_split_top_level(inner, angles=True)) if inner.strip() else 0
                else:
                    count = _cpp_parameter_count(source, target.lstrip("&").split("::")[-1])
                params = [{"name": None, "kind": "positional_only"} for _ in range(count)]
            names[name] = {"kind": "function", "origin": f"{path}:{line}", "params": params}
        for m in re.finditer(r'\bm\.attr\("(\w+)"\)\s*=\s*m\.attr\("(\w+)"\)', text):
            line = text.count("\n", 0, m.start()) + 1
            names[m.group(1)] = dict(names[m.group(2)], origin=f"{path}:{line}", alias_of=m.group(2))
    return names


# ---- the Python package ------------------------------------------------------------------------------------------

def _python_params(args):
    """ast.arguments -> parameter list."""
    out = []
    positional = args.posonlyargs + args.args
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    for i, (arg, default) in enumerate(zip(positional, defaults)):
        p = {"name": arg.arg, "kind": "positional_only" if i < len(args.posonlyargs) else "positional_or_keyword"}
        if default is not None:
            p["default"] = ast.unparse(default)
        out.append(p)
    if args.vararg:
        out.append({"name": args.vararg.arg, "kind": "var_positional"})
    for arg, default in zip(args.kwonlyargs, args.kw_defaults):
        p = {"name": arg.arg, "kind": "keyword_only"}
        if default is not None:
            p["default"] = ast.unparse(default)
        out.append(p)
    if args.kwarg:
        out.append({"name": args.kwarg.arg, "kind": "var_keyword"})
    return out


class Resolver:
    def __init__(self, source):
        self.source = source
        self.extension = extension_names(source)
        self.cache = {}

    def _absolute(self, module, level, name):
        if level == 0:
            return name
        package = module if self.source.module_path(module).endswith("__init__.py") else module.rsplit(".", 1)[0]
        for _ in range(level - 1):
            package = package.rsplit(".", 1)[0]
        return package + ("." + name if name else "")

    def _module_entry(self, module):
        return {"kind": "module", "origin": self.source.module_path(module) or module}

    def namespace(self, module):
        """name -> entry of everything `module` binds at its top level."""
        if module in self.cache:
            return self.cache[module]
        if module == PACKAGE + "._C":
            self.cache[module] = dict(self.extension)
            return self.cache[module]
        path = self.source.module_path(module)
        ns = {}
        self.cache[module] = ns  # guards import cycles
        if path is None:
            return ns
        tree = ast.parse(self.source.files[path], path)
        self._bind(module, path, tree.body, ns)
        return ns

    def _bind_submodule(self, parent, child, ns):
        """Importing parent.child sets `child` on the package `parent` (when it is the module being read)."""
        if "." in child and child.rsplit(".", 1)[0] == parent and self.source.module_path(child):
            ns.setdefault(child.rsplit(".", 1)[1], self._module_entry(child))

    def _bind(self, module, path, body, ns):
        for node in body:
            if isinstance(node, ast.Try):  # DeepGEMM's optional imports: the try body is what a CUDA >= 12.1 build binds
                self._bind(module, path, node.body, ns)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    ns[alias.asname or alias.name.split(".")[0]] = {"kind": "external", "origin": alias.name}
            elif isinstance(node, ast.ImportFrom):
                target = self._absolute(module, node.level, node.module or "")
                internal = target == PACKAGE or target.startswith(PACKAGE + ".")
                if internal and target != PACKAGE + "._C" and self.source.module_path(target) is None:
                    continue  # written at install time (deep_gemm.envs): not in the source
                if internal:
                    self._bind_submodule(module, target, ns)
                for alias in node.names:
                    if not internal:
                        if alias.name != "*":
                            ns[alias.asname or alias.name] = {"kind": "external", "origin": f"{target}.{alias.name}"}
                        continue
                    if alias.name == "*":
                        for name, entry in self.namespace(target).items():
                            if not name.startswith("_"):
                                ns[name] = entry
                        continue
                    sub = f"{target}.{alias.name}"
                    if self.source.module_path(sub) or sub == PACKAGE + "._C":
                        ns[alias.asname or alias.name] = self._module_entry(sub)
                    else:
                        entry = self.namespace(target).get(alias.name)
                        if entry is None:
                            raise ValueError(f"{path}: {target} binds no {alias.name}")
                        ns[alias.asname or alias.name] = entry
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                ns[node.name] = {"kind": "function", "origin": f"{path}:{node.lineno}", "params": _python_params(node.args)}
            elif isinstance(node, ast.ClassDef):
                init = next((n for n in node.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None)
                params = _python_params(init.args)[1:] if init else []
                ns[node.name] = {"kind": "class", "origin": f"{path}:{node.lineno}", "params": params}
            elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) and node.value.id in ns:
                for t in node.targets:
                    if isinstance(t, ast.Name):
                        ns[t.id] = dict(ns[node.value.id], alias_of=node.value.id)


def generate(tarball):
    source = Source(tarball)
    resolver = Resolver(source)
    namespaces = {}
    for module in NAMESPACES:
        ns = resolver.namespace(module)
        namespaces[module] = {name: ns[name] for name in sorted(ns) if not name.startswith("_")}
    public = [n for n, e in namespaces[PACKAGE].items() if e["kind"] != "external"]
    return {
        "generated_by": "scripts/gen_deepgemm_api.py",
        "anchor": os.path.basename(tarball),
        "anchor_sha256": source.sha256,
        "public_name_rule": "names bound in deep_gemm's namespace, not starting with '_', less those bound from "
                            "outside the package (os, subprocess, torch, typing names that wildcard imports carry in)",
        "num_public_names": len(public),
        "namespaces": namespaces,
    }


def render(api):
    return json.dumps(api, indent=1, sort_keys=True) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tarball", default=None)
    parser.add_argument("--out", default=DEFAULT_OUT)
    parser.add_argument("--check", action="store_true", help="fail if --out differs from what the tarball gives")
    args = parser.parse_args()
    tarball = find_tarball(args.tarball)
    if tarball is None:
        sys.exit("no DeepGEMM tarball: pass --tarball or set HOPGEMM_DEEPGEMM_TARBALL")
    text = render(generate(tarball))
    if args.check:
        with open(args.out) as f:
            if f.read() != text:
                sys.exit(f"{args.out} is stale: run python scripts/gen_deepgemm_api.py")
        return
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        f.write(text)
    api = json.loads(text)
    print(f"{args.out}: {api['num_public_names']} public names in deep_gemm")


if __name__ == "__main__":
    main()
