"""What a Python user sees of hopgemm without a GPU: signatures with names, types and defaults, the type stub of the
extension, errors that name the real cause (FP8 NumPy arrays, no driver)."""
import ast
import inspect
import os

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
    assert [(p.name, p.default) for p in params.values()][1:] == [("use_ue8m0", False), ("gran_k", 128)]


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
