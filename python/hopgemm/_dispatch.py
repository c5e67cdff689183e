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


def use_torch_ops(torch):
    """Called by hopgemm/_torch_ops.py once every op is registered: plain calls made while torch.compile traces go
    to torch.ops.hopgemm from now on."""
    global is_compiling, ops
    ops = torch.ops.hopgemm
    compiler = getattr(torch, "compiler", None)  # torch.compiler.is_compiling: torch >= 2.3
    is_compiling = getattr(compiler, "is_compiling", _never)


def _op(name, stream):
    if stream is not None:
        from . import _C

        raise _C.HopgemmValueError(f"{name}: stream= cannot be traced by torch.compile; enter "
                                   "`with torch.cuda.stream(s):` around the call instead")
    return getattr(ops, name)


def _as_list(recipe):
    return None if recipe is None else list(recipe)


# The torch op calls behind the plain GEMMs (a and b are (tensor, scale factors) pairs). The arguments that change
# nothing on SM90 (compiled_dims, disable_ue8m0_cast, ensure_zero_padding) are left out.

def fp8_gemm(name, a, b, d, c, recipe, recipe_a, recipe_b, stream):
    return _op(name, stream)(a[0], a[1], b[0], b[1], d, c, _as_list(recipe), _as_list(recipe_a), _as_list(recipe_b))


def m_grouped_fp8_gemm_contiguous(name, a, b, d, grouped_layout, recipe, recipe_a, recipe_b, use_psum_layout,
                                  expected_m_for_psum_layout, m_indices, use_packed_layout, stream):
    return _op(name, stream)(a[0], a[1], b[0], b[1], d, grouped_layout, _as_list(recipe), _as_list(recipe_a),
                             _as_list(recipe_b), use_psum_layout, expected_m_for_psum_layout, m_indices,
                             use_packed_layout)


def m_grouped_fp8_gemm_nt_masked(a, b, d, masked_m, expected_m, recipe, recipe_a, recipe_b, stream):
    return _op("m_grouped_fp8_gemm_nt_masked", stream)(a[0], a[1], b[0], b[1], d, masked_m, expected_m,
                                                        _as_list(recipe), _as_list(recipe_a), _as_list(recipe_b))


def k_grouped_fp8_gemm_contiguous(name, a, b, d, ks, ks_tensor, c, recipe, use_psum_layout, stream):
    return _op(name, stream)(a[0], a[1], b[0], b[1], d, _as_list(ks), ks_tensor, c, _as_list(recipe),
                             use_psum_layout)
