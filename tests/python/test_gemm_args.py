"""The FP8 GEMMs' keyword arguments, without a GPU: recipe_a / recipe_b (DeepGEMM HEAD's per-operand granularities) are
checked before any tensor, and the compatibility arguments (compiled_dims, disable_ue8m0_cast) are accepted. Host
arrays make every accepted call stop at the first tensor check, so each case shows how far it got."""
import numpy as np
import pytest

import hopgemm

GEMMS = ["fp8_gemm_nt", "fp8_gemm_nn", "fp8_gemm_tn", "fp8_gemm_tt",
         "fp8_fp4_gemm_nt", "fp8_fp4_gemm_nn", "fp8_fp4_gemm_tn", "fp8_fp4_gemm_tt"]
HOST = r"argument 'a' is in host memory"


def call(name, **kwargs):
    x = np.zeros((128, 128), dtype=np.float32)
    getattr(hopgemm, name)((x, x), (x, x), x, **kwargs)


@pytest.mark.parametrize("name", GEMMS)
@pytest.mark.parametrize("kwargs", [
    dict(recipe_a=(1, 128), recipe_b=(128, 128)),
    dict(recipe_a=(1, 128), recipe_b=(1, 128)),
    dict(recipe=(1, 1, 128)),
    dict(compiled_dims="mn"),
    dict(disable_ue8m0_cast=True),
])
def test_accepted_arguments_reach_the_tensors(name, kwargs):
    with pytest.raises(ValueError, match=HOST):
        call(name, **kwargs)


@pytest.mark.parametrize("name", GEMMS)
@pytest.mark.parametrize("kwargs,error,message", [
    (dict(recipe_a=(1, 128)), ValueError, "recipe_a and recipe_b go together"),
    (dict(recipe_b=(128, 128)), ValueError, "recipe_a and recipe_b go together"),
    (dict(recipe=(1, 128, 128), recipe_a=(1, 128), recipe_b=(128, 128)), ValueError,
     "pass recipe or recipe_a/recipe_b, not both"),
    (dict(recipe_a=(1, 128), recipe_b=(128, 64)), NotImplementedError, "must share gran_k, got 128 and 64"),
    (dict(recipe_a=(1, 2, 3)), TypeError, "incompatible function arguments"),
])
def test_bad_recipes_are_refused_before_the_tensors(name, kwargs, error, message):
    with pytest.raises(error, match=message):
        call(name, **kwargs)
