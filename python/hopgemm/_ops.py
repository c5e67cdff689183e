"""Each GEMM op of the package declared once: an Op lists its arguments (name, annotation, default, how the extension
and the torch op take it) and its documentation; from it come
  * the public function (``hopgemm.<name>``): deep_gemm's signature, so that help() shows its parameters, calling the
    extension eagerly and, while torch.compile traces it, the torch op (hopgemm/_dispatch.py);
  * the torch op (``torch.ops.hopgemm.<name>``, registered by hopgemm/_torch_ops.py): its schema (the arguments that
    change nothing on SM90 left out, each (tensor, scales) pair as two tensors) and its call of the extension.
The functions are generated as source text (as dataclasses does) so that both are plain Python functions: Dynamo
traces the public one, and torch.library infers the op's schema from the other's annotations. Never imports torch.
"""
from __future__ import annotations

import __future__
from typing import Any, Optional, Sequence, Tuple  # noqa: F401 (the generated annotations name them)

REQUIRED = object()  # no default


class Arg:
    """One argument of an op, in the extension's order.

    annotation: the public function's annotation; default: REQUIRED or a value; kw_only: keyword-only from here on in
    the public function and the extension. torch: the torch op's annotation of it (None: the op leaves it out, the
    extension takes its default), torch_default: whether the torch op gives it the default too; pair: the two tensor
    names of a (tensor, scales) argument in the torch op; binding: the extension's name where it differs (the public
    name is then normalised into it by the op's prologue); alias: a public keyword only (another name of an argument,
    folded into it by the prologue), passed on to neither.
    """

    def __init__(self, name, annotation, default=REQUIRED, *, kw_only=False, torch=None, torch_default=True, pair=None,
                 binding=None, alias=False):
        self.name, self.annotation, self.default, self.kw_only = name, annotation, default, kw_only
        self.torch, self.torch_default, self.pair, self.binding = torch, torch_default, pair, binding or name
        self.alias = alias


class Op:
    """An op: its name (the extension's function and the torch op have it too), its arguments, its documentation,
    optional prologue lines run first by the public function (keyword aliases; they may raise ValueError), and the
    arguments it writes in place (the torch op's mutated arguments)."""

    def __init__(self, name, args, doc, prologue="", mutates=("d",)):
        self.name, self.args, self.doc, self.prologue, self.mutates = name, args, doc, prologue, tuple(mutates)


def _signature(params):
    out, kw = [], False
    for text, kw_only in params:
        if kw_only and not kw:
            out.append("*")
            kw = True
        out.append(text)
    return ", ".join(out)


def _default_name(op, arg):
    return f"_d_{arg.name}"


def public_function(op, C, dispatch):
    """The public function of `op` over the extension module C."""
    env = {"_kernel": getattr(C, op.name), "_dispatch": dispatch, "_C": C, "_as_list": _as_list}
    params = []
    for arg in op.args:
        text = f"{arg.name}: {arg.annotation}"
        if arg.default is not REQUIRED:
            env[_default_name(op, arg)] = arg.default
            text += f" = {_default_name(op, arg)}"
        params.append((text, arg.kw_only))
    torch_args = []
    for arg in op.args:
        if arg.torch is None or arg.alias:
            continue
        if arg.pair:
            torch_args += [f"{arg.binding}[0]", f"{arg.binding}[1]"]
        elif "List[int]" in arg.torch:
            torch_args.append(f"_as_list({arg.binding})")
        else:
            torch_args.append(arg.binding)
    call = [arg.binding if not arg.kw_only else f"{arg.binding}={arg.binding}" for arg in op.args if not arg.alias]
    prologue = "".join(f"    {line}\n" for line in op.prologue.splitlines())
    source = (f"def {op.name}({_signature(params)}) -> None:\n{prologue}"
              f"    if _dispatch.is_compiling():\n"
              f"        return _dispatch.call({op.name!r}, stream, {', '.join(torch_args)})\n"
              f"    _kernel({', '.join(call)})\n")
    # Annotations kept as text, as in a module with `from __future__ import annotations` (help() shows them so).
    fn = _define(source, op.name, env, __future__.annotations.compiler_flag)
    fn.__module__ = "hopgemm"
    fn.__doc__ = op.doc
    return fn


def torch_op_function(op, C, torch_namespace):
    """The function the torch op of `op` wraps: typed parameters (for the schema), calling the extension."""
    env = dict(torch_namespace, _kernel=getattr(C, op.name), _tuple=_tuple)
    params, call = [], []
    for arg in op.args:
        if arg.torch is None or arg.alias:
            continue
        if arg.pair:
            params += [(f"{name}: Tensor", False) for name in arg.pair]
            call.append(f"{arg.binding}=({', '.join(arg.pair)})")  # by keyword: an op may start with a plain one
            continue
        text = f"{arg.binding}: {arg.torch}"
        if arg.default is not REQUIRED and arg.torch_default:
            env[_default_name(op, arg)] = arg.default
            text += f" = {_default_name(op, arg)}"
        params.append((text, False))
        value = f"_tuple({arg.binding})" if "List[int]" in arg.torch else arg.binding
        call.append(f"{arg.binding}={value}")
    source = (f"def {op.name}({_signature(params)}) -> None:\n"
              f"    _kernel({', '.join(call)})\n")
    fn = _define(source, op.name, env, 0)  # evaluated annotations: torch.library infers the schema from them
    fn.__doc__ = (f"hopgemm.{op.name} as a torch op: each (tensor, scales) pair passed as two tensors; mutates "
                  f"{', '.join(op.mutates)}.")
    return fn


def _define(source, name, env, flags):
    code = compile(source, f"<hopgemm op {name}>", "exec", flags=flags, dont_inherit=True)
    namespace = dict(env)
    exec(code, namespace)  # noqa: S102 (source built above from the op table, nothing from outside)
    return namespace[name]


def _as_list(seq):
    return None if seq is None else list(seq)


def _tuple(seq):
    return None if seq is None else tuple(seq)


# Every op declared in the package (hopgemm/_gemm.py, hopgemm/_grouped.py add theirs), in declaration order.
OPS = {}


def declare(op, C, dispatch):
    """Records `op` and returns its public function."""
    OPS[op.name] = op
    return public_function(op, C, dispatch)
