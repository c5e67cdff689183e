#!/usr/bin/env python3
"""Writes docs/API_REFERENCE.md from the code: every public Python name of the installed hopgemm (signature and
docstring, as help() shows them) and every public C++ header (include/hopgemm/*.hpp, its declarations with their
comments). tests/python/test_api_reference.py fails when the file is not what this script writes now.

    python scripts/gen_api_reference.py [--out docs/API_REFERENCE.md] [--check]
"""
import argparse
import inspect
import os
import re
import sys
import types

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_OUT = os.path.join(ROOT, "docs", "API_REFERENCE.md")
HEADERS = os.path.join(ROOT, "include", "hopgemm")


def _signature(name, obj):
    """`name(params) -> result` as help() would show it; nanobind functions from their signature line."""
    nb = getattr(obj, "__nb_signature__", None)
    if nb:
        lines = []
        for text, _, defaults in nb:
            text = re.sub(r"\\(\d+)", lambda m: repr(defaults[int(m.group(1))]), text)
            lines.append(re.sub(r"^def \w+", name, text).replace("hopgemm._C.", ""))
        return "\n".join(lines)
    try:
        signature = inspect.signature(obj)
    except (TypeError, ValueError):
        return name + "(...)"
    # String annotations (from __future__ import annotations) shown as written, not quoted.
    plain = [p.replace(annotation=_Written(p.annotation)) if isinstance(p.annotation, str) else p
             for p in signature.parameters.values()]
    result = signature.return_annotation
    return name + str(signature.replace(parameters=plain, return_annotation=_Written(result) if isinstance(result, str)
                                        else result))


class _Written(str):
    def __repr__(self):
        return str(self)


def _doc(obj):
    nb = getattr(obj, "__nb_signature__", None)
    doc = (nb[0][1] or "") if nb else (inspect.getdoc(obj) or "")  # a nanobind __doc__ repeats the signature
    return doc.strip()


def _entry(name, obj, also=None):
    out = []
    if inspect.isclass(obj):
        bases = [b.__name__ for b in obj.__bases__ if b is not object]
        out.append(f"### class `{name}`" + (f" ({', '.join(bases)})" if bases else ""))
        if not issubclass(obj, BaseException) and "__init__" in obj.__dict__:
            out.append(f"```python\n{_signature(name, obj)}\n```")
    else:
        out.append(f"### `{name}`")
        out.append(f"```python\n{_signature(name, obj)}\n```")
    if also:
        out.append(f"Also: {', '.join(f'`{a}`' for a in also)}.")
    doc = _doc(obj)
    if doc:
        out.append(doc)
    if inspect.isclass(obj) and not issubclass(obj, BaseException):
        for member, value in sorted(vars(obj).items()):
            if member.startswith("_"):
                continue
            kind = "property" if isinstance(value, property) or type(value).__name__.startswith("nb_") else "method"
            member_doc = _doc(value) if kind == "method" else ""
            out.append(f"- `{member}`" + (f": {member_doc.splitlines()[0]}" if member_doc else ""))
    return "\n\n".join(out)


def python_reference():
    import hopgemm

    namespaces = [("hopgemm.utils", hopgemm.utils), ("hopgemm.testing", hopgemm.testing),
                  ("hopgemm.mega", hopgemm.mega), ("hopgemm", hopgemm)]
    placed = {}  # id(object) -> the namespace it is listed in
    sections = []
    for module_name, module in namespaces:
        names = getattr(module, "__all__", None) or [n for n in dir(module) if not n.startswith("_")]
        entries = []
        for name in sorted(set(names)):
            obj = getattr(module, name)
            if isinstance(obj, types.ModuleType) or id(obj) in placed or not callable(obj):
                continue
            if getattr(obj, "__name__", name) != name and getattr(module, obj.__name__, None) is obj:
                continue  # an alias: listed under the object's own name
            # Listed once: in the first namespace (of the order above) that has it; the others are named with it.
            also = [f"{m}.{n}" for m, mod in namespaces if m != module_name
                    for n in dir(mod) if not n.startswith("_") and getattr(mod, n) is obj]
            placed[id(obj)] = module_name
            entries.append(_entry(f"{module_name}.{name}", obj, sorted(set(also))))
        doc = _doc(module).split("\n\n")[0]
        sections.append(f"## `{module_name}`\n\n{doc}\n\n" + "\n\n".join(entries))
    return "\n\n".join(sections)


def cpp_reference():
    parts = []
    for header in sorted(os.listdir(HEADERS)):
        if not header.endswith(".hpp"):
            continue
        with open(os.path.join(HEADERS, header)) as f:
            lines = f.read().splitlines()
        kept = [line for line in lines if not re.match(r"\s*(#pragma once|#include|namespace [\w:]+ \{|\}\s*// namespace)",
                                                       line)]
        while kept and not kept[0].strip():
            kept.pop(0)
        text = re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip()
        if text:
            parts.append(f"### `hopgemm/{header}`\n\n```cpp\n{text}\n```")
    return "## C++ (`#include <hopgemm/hopgemm.hpp>`, namespace `hopgemm`)\n\n" + "\n\n".join(parts)


def render():
    return ("# API reference\n\n"
            "Generated by `python scripts/gen_api_reference.py` from the code (the installed Python package and "
            "include/hopgemm/*.hpp); do not edit by hand. The guide with the semantics, layouts and examples is "
            "docs/API.md; coming from deep_gemm: docs/MIGRATION.md.\n\n"
            + python_reference() + "\n\n" + cpp_reference() + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=DEFAULT_OUT)
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    text = render()
    if args.check:
        with open(args.out) as f:
            if f.read() != text:
                sys.exit(f"{args.out} is stale: run python scripts/gen_api_reference.py")
        return
    with open(args.out, "w") as f:
        f.write(text)
    print(f"{args.out}: {text.count(chr(10))} lines")


if __name__ == "__main__":
    main()
