"""What a Python user sees of hopgemm without a GPU: signatures with names, types and defaults, the type stub of the
extension, errors that name the real cause (FP8 NumPy arrays, no driver)."""
import ast
import inspect
import os
import re

import pytest

import hopgemm
from hopgemm import _C


def public_callables():
    names = {hopgemm: [n for n in dir(hopgemm) if not n.startswith("_")],
             hopgemm.utils: hopgemm.utils.__all__, hopgemm.testing: hopgemm.testing.__all__}
    for module, public in names.items():
        for name in sorted(public):
            value = getattr(module, name)
            if callable(value) and not inspect.isclass(value):
                yield f"{module.__name__}.{name}", value


@pytest.mark.parametrize("name,fn", list(public_callables()))
def test_every_public_function_shows_typed_parameters(name, fn):
    if inspect.isfunction(fn):
        sig = inspect.signature(fn)
        untyped = [p.name for p in sig.parameters.values() if p.annotation is inspect.Parameter.empty]
        assert not untyped, f"{name}{sig}: parameters without a type"
        assert sig.return_annotation is not inspect.Signature.empty, f"{name}{sig}: no return type"
    else:  # a nanobind function: help() shows the signature line of its docstring
        first_line = fn.__doc__.splitlines()[0]
        assert first_line.startswith(fn.__name__ + "("), first_line
        assert ": object" not in first_line and "->" in first_line, first_line


def test_gemm_signatures_are_deep_gemms():
    for name, dims in [("fp8_gemm_nt", "nk"), ("fp8_gemm_nn", "nk"), ("fp8_gemm_tn", "mn"), ("fp8_gemm_tt", "mn")]:
        params = inspect.signature(getattr(hopgemm, name)).parameters
        assert list(params) == ["a", "b", "d", "c", "recipe", "recipe_a", "recipe_b", "compiled_dims",
                                "disable_ue8m0_cast", "stream"], name
        defaults = {p.name: p.default for p in params.values() if p.default is not inspect.Parameter.empty}
        assert defaults == dict(c=None, recipe=None, recipe_a=None, recipe_b=None, compiled_dims=dims,
                                disable_ue8m0_cast=False, stream=None), name
        assert getattr(hopgemm, name).__doc__ and "in place" in getattr(hopgemm, name).__doc__
    assert hopgemm.fp8_fp4_gemm_nt is hopgemm.fp8_gemm_nt
    params = inspect.signature(hopgemm.utils.per_token_cast_to_fp8).parameters
    assert [(p.name, p.default) for p in params.values()][1:] == [("use_ue8m0", False), ("gran_k", 128),
                                                                  ("use_packed_ue8m0", False)]


_RECIPES = dict(recipe=None, recipe_a=None, recipe_b=None)
# deep_gemm HEAD's parameters in its order, then hopgemm's keyword-only ones; the defaults.
GROUPED_SIGNATURES = {
    "m_grouped_fp8_gemm_nt_contiguous": (
        ["a", "b", "d", "grouped_layout", "recipe", "recipe_a", "recipe_b", "compiled_dims", "disable_ue8m0_cast",
         "use_psum_layout", "ensure_zero_padding", "expected_m_for_psum_layout"],
        ["m_indices", "use_packed_layout", "zero_padding_blocks", "stream"],
        dict(grouped_layout=None, **_RECIPES, compiled_dims="nk", disable_ue8m0_cast=False, use_psum_layout=False,
             ensure_zero_padding=True, expected_m_for_psum_layout=None, m_indices=None, use_packed_layout=False,
             zero_padding_blocks=True, stream=None)),
    "m_grouped_fp8_gemm_nt_masked": (
        ["a", "b", "d", "masked_m", "expected_m", "recipe", "recipe_a", "recipe_b", "compiled_dims",
         "disable_ue8m0_cast"],
        ["stream"],
        dict(**_RECIPES, compiled_dims="nk", disable_ue8m0_cast=False, stream=None)),
    "k_grouped_fp8_gemm_nt_contiguous": (
        ["a", "b", "d", "ks_cpu", "grouped_layout", "c", "recipe", "compiled_dims", "use_psum_layout"],
        ["ks", "ks_tensor", "stream"],
        dict(ks_cpu=None, grouped_layout=None, c=None, recipe=(1, 1, 128), compiled_dims="mn", use_psum_layout=False,
             ks=None, ks_tensor=None, stream=None)),
}
# The K-grouped wrappers take deep_gemm HEAD's ks_cpu / grouped_layout (hopgemm's older ks / ks_tensor as keywords)
# and pass them on as the extension's ks / ks_tensor.
WRAPPER_ONLY_KEYWORDS = {"ks", "ks_tensor"}
EXTENSION_NAMES = {"ks_cpu": "ks", "grouped_layout": "ks_tensor"}
GROUPED_SIGNATURES["m_grouped_fp8_gemm_nn_contiguous"] = GROUPED_SIGNATURES["m_grouped_fp8_gemm_nt_contiguous"]
GROUPED_SIGNATURES["k_grouped_fp8_gemm_tn_contiguous"] = GROUPED_SIGNATURES["k_grouped_fp8_gemm_nt_contiguous"]


def extension_parameters(fn):
    """The parameter names (and '*') of a nanobind function, from the signature line of its docstring."""
    line = fn.__doc__.splitlines()[0]
    return re.findall(r"(?:\(|, )(\*(?=, )|\w+(?=: ))", line)


@pytest.mark.parametrize("name", sorted(GROUPED_SIGNATURES))
def test_grouped_gemm_signatures_are_deep_gemms(name):
    positional, keyword_only, defaults = GROUPED_SIGNATURES[name]
    fn = getattr(hopgemm, name)
    params = inspect.signature(fn).parameters.values()
    assert [p.name for p in params if p.kind is p.POSITIONAL_OR_KEYWORD] == positional
    assert [p.name for p in params if p.kind is p.KEYWORD_ONLY] == keyword_only
    assert {p.name: p.default for p in params if p.default is not p.empty} == defaults
    assert fn.__name__ == name and fn.__module__ == "hopgemm" and "in place" in fn.__doc__
    k_grouped = name.startswith("k_grouped")
    extension_keywords = [k for k in keyword_only if not (k_grouped and k in WRAPPER_ONLY_KEYWORDS)]
    extension_positional = [EXTENSION_NAMES.get(p, p) if k_grouped else p for p in positional]
    assert extension_parameters(getattr(_C, name)) == extension_positional + ["*"] + extension_keywords


def test_the_extension_stub_ships_and_names_what_the_module_has():
    package = os.path.dirname(hopgemm.__file__)
    assert os.path.isfile(os.path.join(package, "py.typed"))
    with open(os.path.join(package, "_C.pyi")) as f:
        stub = ast.parse(f.read())
    stubbed = {node.name: node for node in stub.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    public = {name for name in dir(_C) if not name.startswith("_")}
    assert set(stubbed) == public
    precompile = stubbed["precompile"]
    assert [a.arg for a in precompile.args.args] == ["suite", "num_sms", "jobs", "show_progress"]
    assert [ast.literal_eval(d) for d in precompile.args.defaults] == [132, 0, False]
    assert ast.unparse(precompile.returns) == "PrecompileReport"
    assert {n.name for n in stubbed["PrecompileReport"].body if isinstance(n, ast.FunctionDef)} >= {
        "num_kernels", "num_compiled", "num_cached", "num_stored", "seconds", "errors"}


def test_fp8_numpy_arrays_are_refused_for_the_real_reason():
    ml_dtypes = pytest.importorskip("ml_dtypes", reason="needs ml_dtypes (pip install ml_dtypes) for FP8 NumPy arrays")
    import numpy as np

    a = np.zeros((4, 128), dtype=ml_dtypes.float8_e4m3fn)
    sf = np.ones((4, 1), dtype=np.float32)
    with pytest.raises(TypeError) as caught:
        hopgemm.fp8_gemm_nt((a, sf), (a, sf), np.zeros((4, 4), dtype=np.float32))
    message = str(caught.value)
    assert "argument 'a'" in message and "cannot be exported through DLPack" in message, message
    assert "NumPy cannot export float8 arrays" in message and "BufferError" in message, message


def test_not_a_tensor_is_a_type_error_naming_the_argument():
    with pytest.raises(TypeError, match="argument 'x' must be a tensor"):
        hopgemm.utils.per_token_cast_to_fp8(object())


@pytest.mark.skipif(hopgemm.gpu_available(), reason="checks the message given where there is no GPU; one is here")
@pytest.mark.parametrize("fn", [hopgemm.device_info, hopgemm.get_num_sms])
def test_without_a_gpu_device_queries_say_so(fn):
    with pytest.raises(RuntimeError, match=fn.__name__ + r": no GPU to use here: .*precompiled without one"):
        fn()
