"""Lets torch.compile trace the plain hopgemm functions.

Dynamo cannot trace a call into the nanobind extension, so each plain function that has a torch.library op
(hopgemm/_torch_ops.py) starts with ``if _dispatch.is_compiling(): return <the op>``. Until the ops are registered
nothing can be compiling, and ``is_compiling`` is a function that returns False; registration swaps in
``torch.compiler.is_compiling``, which Dynamo folds to True while tracing and which costs eager calls one more
Python call (about 0.1 us). Never imports torch.
"""


def _never():
    return False


is_compiling = _never
ops = None  # torch.ops.hopgemm once registered
_torch = None  # the torch module once registered (for dtypes named by strings)


def use_torch_ops(torch):
    """Called by hopgemm/_torch_ops.py once every op is registered: plain calls made while torch.compile traces go
    to torch.ops.hopgemm from now on."""
    global is_compiling, ops, _torch
    ops, _torch = torch.ops.hopgemm, torch
    compiler = getattr(torch, "compiler", None)  # torch.compiler.is_compiling: torch >= 2.3
    is_compiling = getattr(compiler, "is_compiling", _never)


def _op(name, stream):
    if stream is not None:
        from . import _C

        raise _C.HopgemmValueError(f"{name}: stream= cannot be traced by torch.compile; enter "
                                   "`with torch.cuda.stream(s):` around the call instead")
    return getattr(ops, name)


def call(name, stream, *args):
    """The torch op `name` on `args` (the op's own arguments, as hopgemm/_ops.py's public functions pass them)."""
    return _op(name, stream)(*args)


# The indexer's op calls (hopgemm/_mqa_logits.py checks the arguments first; dtype is the logits dtype's name).

def mqa_logits(q, kv, kv_sf, weights, ks, ke, clean_logits, max_seqlen_k, dtype, stream):
    return _op("fp8_mqa_logits", stream)(q, kv, kv_sf, weights, ks, ke, clean_logits, max_seqlen_k,
                                         getattr(_torch, dtype))


def get_paged_mqa_logits_metadata(context_lens, block_kv, num_sms, stream):
    return _op("get_paged_mqa_logits_metadata", stream)(context_lens, block_kv, num_sms)


def fp8_paged_mqa_logits(q, kv_cache, weights, context_lens, block_table, schedule_meta, max_context_len,
                         clean_logits, dtype, stream):
    return _op("fp8_paged_mqa_logits", stream)(q, kv_cache, weights, context_lens, block_table, schedule_meta,
                                               max_context_len, clean_logits, getattr(_torch, dtype))
