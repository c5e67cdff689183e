"""DeepGEMM's cuBLASLt wrappers (hopgemm.cublaslt_gemm_*) without a GPU: the cuBLASLt problem each layout maps to,
the descriptors DeepGEMM's settings make (created by the real libcublasLt, which needs no GPU for them), and the
argument errors. tests/gpu/test_cublaslt.py runs the GEMMs."""
import inspect

import pytest

from conftest import requires_torch

import hopgemm
from hopgemm import _cublaslt

T, N = _cublaslt._CUBLAS_OP_T, _cublaslt._CUBLAS_OP_N


def test_the_four_names_have_deepgemms_signature():
    for layout in ("nt", "nn", "tn", "tt"):
        fn = getattr(hopgemm, f"cublaslt_gemm_{layout}")
        params = inspect.signature(fn).parameters
        assert list(params) == ["a", "b", "d", "c"] and params["c"].default is None


def test_layouts_are_deepgemms_column_major_problem():
    # D[M, N] = A[M, K] B[N, K]^T is D^T[N, M] = B A^T in column-major: cuBLASLt's A is B, its B is A.
    m, n, k = 4, 5, 6
    # Both K-major (row-major A [M, K], B [N, K]).
    assert _cublaslt.cublaslt_layouts(m, n, k, (k, 1), (k, 1), n) == (T, N, (k, n, k), (k, m, k), (n, m, n))
    # Both MN-major (A given as [K, M] transposed: strides (1, M); B as [K, N]: strides (1, N)).
    assert _cublaslt.cublaslt_layouts(m, n, k, (1, m), (1, n), n) == (N, T, (n, k, n), (m, k, m), (n, m, n))
    # Padded leading dimensions are passed through, D's row stride is its leading dimension.
    assert _cublaslt.cublaslt_layouts(m, n, k, (8, 1), (1, 16), 32) == (N, N, (n, k, 16), (k, m, 8), (n, m, 32))


@pytest.mark.parametrize("in_type", sorted(_cublaslt._CUDA_TYPES))
@pytest.mark.parametrize("out_type", ["bfloat16", "float32"])
def test_descriptors_of_deepgemms_settings_are_accepted_by_cublaslt(in_type, out_type):
    # Every attribute and value the wrapper sets (compute type, transposes, scale type, SM-count target, FP8 fast
    # accumulation, workspace and reduction-scheme preferences) is taken by this machine's libcublasLt.
    lib = _cublaslt._library.open()
    types = _cublaslt._CUDA_TYPES
    with _cublaslt._Matmul(lib, 256, 512, 1024, (1024, 1), (1024, 1), 512, types[in_type], types[out_type],
                           132) as op:
        assert len(op.layouts) == 3 and all(op.layouts) and op.desc and op.pref
    assert op.layouts == [] and not op.desc and not op.pref  # destroyed on exit


def test_an_attribute_cublaslt_rejects_raises():
    lib = _cublaslt._library.open()
    with _cublaslt._Matmul(lib, 4, 4, 16, (16, 1), (16, 1), 4, 14, 14, 132) as op:
        with pytest.raises(RuntimeError, match="cuBLAS status"):
            _cublaslt._set(lib.lib.cublasLtMatmulDescSetAttribute, op.desc, 99999, _cublaslt.ctypes.c_int(0))


@requires_torch
def test_bad_arguments_raise_clear_errors():
    import torch

    bf16 = torch.bfloat16
    a, b, d = torch.zeros(4, 6, dtype=bf16), torch.zeros(5, 6, dtype=bf16), torch.zeros(4, 5, dtype=bf16)
    cases = [
        ((a, b, torch.zeros(4, 4, dtype=bf16)), ValueError, "shapes do not match"),
        ((a[:, None], b, d), ValueError, "a must be 2-D"),
        ((a, b.float(), d), TypeError, "one type of"),
        ((a.int(), b.int(), d), TypeError, "one type of"),
        ((a, b, d.half()), TypeError, "d must be bfloat16 or float32"),
        ((a, b, torch.zeros(5, 4, dtype=bf16).t()), ValueError, "d must be row-major"),
        ((a, b, d, d.float()), ValueError, "c must be row-major and of d's type"),
        ((a, b, d, torch.zeros(2, 5, dtype=bf16)), ValueError, "c must have d's shape"),
        ((torch.zeros(6, 8, dtype=bf16)[:, ::2].t(), b, d), ValueError, "a needs a contiguous dimension"),
        ((a, b, d), ValueError, "must be on d's CUDA device"),
        (([[0.0]], b, d), TypeError, "must be a torch tensor"),
    ]
    for args, error, message in cases:
        with pytest.raises(error, match=message):
            hopgemm.cublaslt_gemm_nt(*args)
        with pytest.raises(RuntimeError):  # DeepGEMM's checks raise RuntimeError: so do these
            hopgemm.cublaslt_gemm_nt(*args)
    with pytest.raises(ValueError, match="shapes do not match"):  # nn takes B as [K, N]
        hopgemm.cublaslt_gemm_nn(a, b, d)
    with pytest.raises(TypeError, match="takes torch tensors"):
        hopgemm.cublaslt_gemm_tn([[0.0]], b, d)
