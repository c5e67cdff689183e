"""The FP8 GEMMs' keyword arguments, without a GPU: recipe_a / recipe_b (DeepGEMM HEAD's per-operand granularities),
the grouped GEMMs' layout keywords (grouped_layout or its older name m_indices, use_psum_layout, use_packed_layout,
expected_m_for_psum_layout) and the K-grouped ks / use_psum_layout are checked before any tensor, and the
compatibility arguments (compiled_dims, disable_ue8m0_cast, ensure_zero_padding) are accepted. Host arrays make every
accepted call stop at the first tensor check, so each case shows how far it got."""
import numpy as np
import pytest

import hopgemm

X = np.zeros((128, 128), dtype=np.float32)
IDS = np.zeros(128, dtype=np.int32)
HOST = r"argument 'a' is in host memory"

DENSE = ["fp8_gemm_nt", "fp8_gemm_nn", "fp8_gemm_tn", "fp8_gemm_tt",
         "fp8_fp4_gemm_nt", "fp8_fp4_gemm_nn", "fp8_fp4_gemm_tn", "fp8_fp4_gemm_tt"]
CONTIGUOUS = ["m_grouped_fp8_gemm_nt_contiguous", "m_grouped_fp8_gemm_nn_contiguous",
              "m_grouped_fp8_fp4_gemm_nt_contiguous", "m_grouped_fp8_fp4_gemm_nn_contiguous"]
MASKED = ["m_grouped_fp8_gemm_nt_masked", "m_grouped_fp8_fp4_gemm_nt_masked", "fp8_m_grouped_gemm_nt_masked"]
K_GROUPED = ["k_grouped_fp8_gemm_nt_contiguous", "k_grouped_fp8_gemm_tn_contiguous"]


# What each grouped GEMM needs after (a, b, d): grouped_layout; masked_m, expected_m; ks, ks_tensor.
REQUIRED = {**dict.fromkeys(CONTIGUOUS, (IDS,)), **dict.fromkeys(MASKED, (IDS, 64)),
            **dict.fromkeys(K_GROUPED, ([128], IDS))}


def call(name, args=None, **kwargs):
    """`name` on host arrays: (a, b, d) and then `args` (default: what `name` requires) and `kwargs`."""
    getattr(hopgemm, name)((X, X), (X, X), X, *(REQUIRED.get(name, ()) if args is None else args), **kwargs)


@pytest.mark.parametrize("name", DENSE + CONTIGUOUS + MASKED)
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


@pytest.mark.parametrize("name", DENSE + CONTIGUOUS + MASKED)
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


# ---- M-grouped contiguous: which tensor is the layout, and which layout --------------------------------------

@pytest.mark.parametrize("name", CONTIGUOUS)
@pytest.mark.parametrize("args,kwargs", [
    (None, {}),
    ((), dict(grouped_layout=IDS)),
    ((), dict(m_indices=IDS)),  # deep_gemm's older keyword
    (None, dict(use_psum_layout=True, expected_m_for_psum_layout=64)),
    (None, dict(use_packed_layout=True, expected_m_for_psum_layout=64)),
    (None, dict(use_packed_layout=True)),
    (None, dict(ensure_zero_padding=False)),
    ((IDS, None, None, None, "nk", False, True, True, 64), {}),  # HEAD's positional order
])
def test_contiguous_layout_arguments_reach_the_tensors(name, args, kwargs):
    with pytest.raises(ValueError, match=HOST):
        call(name, args, **kwargs)


@pytest.mark.parametrize("name", CONTIGUOUS)
@pytest.mark.parametrize("args,kwargs,message", [
    ((), {}, r"argument 'grouped_layout' \(or its older name 'm_indices'\) is required"),
    (None, dict(m_indices=IDS), "pass grouped_layout or its older name m_indices, not both"),
    ((), dict(grouped_layout=IDS, m_indices=IDS), "pass grouped_layout or its older name m_indices, not both"),
    (None, dict(use_psum_layout=True, use_packed_layout=True), "use_psum_layout and use_packed_layout exclude"),
    (None, dict(expected_m_for_psum_layout=64), "expected_m_for_psum_layout needs use_psum_layout=True or "
                                                "use_packed_layout=True"),
])
def test_contiguous_layout_mistakes_are_refused_before_the_tensors(name, args, kwargs, message):
    with pytest.raises(ValueError, match=f"{name.replace('_fp4', '')}: {message}"):
        call(name, args, **kwargs)


@pytest.mark.parametrize("name,args", [
    *[(name, (IDS, None, None, None, "nk", False, False, True, None)) for name in CONTIGUOUS],
    *[(name, (IDS, 64, None, None, None, "nk", False)) for name in MASKED],
    *[(name, ([128], IDS, None, (1, 1, 128), "mn", False)) for name in K_GROUPED],
])
def test_stream_and_hopgemm_extras_are_keyword_only(name, args):
    with pytest.raises(ValueError, match=HOST):  # every positional parameter deep_gemm has
        call(name, args)
    with pytest.raises(TypeError, match="positional arguments but"):  # and no more
        call(name, args + (0,))


# ---- K-grouped: ks on the host, no psum layout ---------------------------------------------------------------

@pytest.mark.parametrize("name", K_GROUPED)
@pytest.mark.parametrize("args,kwargs", [
    (([128, 0, 256], IDS), {}),
    (((128,), IDS, X, (1, 1, 128), "nk"), {}),
    ((), dict(ks=[128], ks_tensor=IDS, c=X, stream=0)),
])
def test_k_grouped_arguments_reach_the_tensors(name, args, kwargs):
    with pytest.raises(ValueError, match=HOST):
        call(name, args, **kwargs)


@pytest.mark.parametrize("name", K_GROUPED)
@pytest.mark.parametrize("args,kwargs,error,message", [
    ((None, IDS), {}, ValueError, r"argument 'ks' must be the groups' K as a list of ints"),
    (None, dict(use_psum_layout=True), NotImplementedError, "use_psum_layout=True is not supported on SM90"),
])
def test_k_grouped_mistakes_are_refused_before_the_tensors(name, args, kwargs, error, message):
    with pytest.raises(error, match=f"{name}: {message}"):
        call(name, args, **kwargs)


@pytest.mark.parametrize("name", K_GROUPED)
def test_k_grouped_ks_must_be_ints(name):
    with pytest.raises(TypeError, match="incompatible function arguments"):
        call(name, ([128.5], IDS))
