"""Inputs and checks shared by the FP8 GEMM GPU tests (imported after their skip checks): hopgemm.testing's
magnitude-varied inputs and element-wise bound against the float64 reference of the dequantised inputs, plus calc_diff."""
import torch

from hopgemm.testing import assert_fp8_gemm_close, calc_diff, fp8_gemm_inputs

# calc_diff bars (DeepGEMM's metric, kept beside the element-wise bound): the reference is exact on the dequantised
# inputs, so the error is the output rounding (BF16: ~1e-6) plus the tensor cores' accumulation; the issue's bar is 1e-3.
TOL_BF16, TOL_FP32 = 2e-5, 1e-5


def make_inputs(m, n, k, recipe_1d1d=False, seed=0):
    """(a8, sfa, b8, sfb): A [m, k] per 1x128, B [n, k] per 128x128 (1D2D) or per 1x128 (1D1D), with magnitudes that
    differ from one scale block to the next (hopgemm.testing.fp8_gemm_inputs)."""
    return fp8_gemm_inputs(m, n, k, 1 if recipe_1d1d else 128, seed)


def check(d, a8, sfa, b8, sfb, recipe_1d1d, c=None):
    """d against the reference: every element written (no NaN left of the poison) and within its own bound
    (hopgemm.testing.assert_fp8_gemm_close: a wrong tile or strip fails, naming where), and calc_diff under the bar of
    d's dtype."""
    ref = assert_fp8_gemm_close(d, a8, sfa, b8, sfb, 1 if recipe_1d1d else 128, c)
    assert calc_diff(d, ref) < (TOL_BF16 if d.dtype == torch.bfloat16 else TOL_FP32)


def poisoned(m, n, dtype):
    """An output filled with NaN, so that every element the op fails to write is caught."""
    return torch.full((m, n), float("nan"), device="cuda", dtype=dtype)
