"""The dense FP8 GEMMs with deep_gemm's signatures: thin Python functions over the extension, so that help() shows
their parameters and torch.compile can trace them (hopgemm/_dispatch.py)."""
from __future__ import annotations

from typing import Any, Optional, Sequence, Tuple

from . import _C, _dispatch
from ._tensors import Tensor

__all__ = ["fp8_gemm_nt", "fp8_gemm_nn", "fp8_gemm_tn", "fp8_gemm_tt"]

_COMMON_DOC = """

a=(A, sfa), b=(B, sfb): FP8 e4m3 data with FP32 scale factors; d [M, N] is written in place (nothing is returned).
recipe (gran_m, gran_n, gran_k): (1, 128, 128) scales A per 1x128 and B per 128x128 block, d BF16 (or FP32);
(1, 1, 128) scales both per 1x128, d FP32 (or BF16), with c to accumulate (c may be d itself). None infers it from
sfb's shape. recipe_a / recipe_b: per-operand (gran_mn, gran_k), instead of recipe. sfa and sfb may be row-major
(as the quantisers return them) or MN-major TMA-aligned. compiled_dims and disable_ue8m0_cast are accepted for
deep_gemm compatibility and change nothing on SM90. stream: None (torch's current stream of the tensors' device,
or the default stream), an int cudaStream_t, a torch.cuda.Stream, or any object with __cuda_stream__.
Raises ValueError for invalid arguments, NotImplementedError for unsupported combinations, RuntimeError for JIT
and CUDA failures."""


def _make_gemm(name, default_dims, summary):
    kernel = getattr(_C, name)

    def gemm(a: Tuple[Tensor, Tensor], b: Tuple[Tensor, Tensor], d: Tensor, c: Optional[Tensor] = None,
             recipe: Optional[Sequence[int]] = None, recipe_a: Optional[Sequence[int]] = None,
             recipe_b: Optional[Sequence[int]] = None, compiled_dims: str = default_dims,
             disable_ue8m0_cast: bool = False, stream: Any = None) -> None:
        if _dispatch.is_compiling():  # compiled_dims and disable_ue8m0_cast change nothing on SM90
            return _dispatch.fp8_gemm(name, a, b, d, c, recipe, recipe_a, recipe_b, stream)
        kernel(a, b, d, c, recipe, recipe_a, recipe_b, compiled_dims, disable_ue8m0_cast, stream)

    gemm.__name__ = gemm.__qualname__ = name
    gemm.__module__ = "hopgemm"
    gemm.__doc__ = summary + _COMMON_DOC
    return gemm


fp8_gemm_nt = _make_gemm("fp8_gemm_nt", "nk", "D = C + A @ B^T with A [M, K] and B [N, K], both K-major.")
fp8_gemm_nn = _make_gemm("fp8_gemm_nn", "nk", "fp8_gemm_nt with B given as [K, N] (a transposed view of [N, K]).")
fp8_gemm_tn = _make_gemm("fp8_gemm_tn", "mn", "fp8_gemm_nt with A given as [K, M] and B as [K, N] (transposed views).")
fp8_gemm_tt = _make_gemm("fp8_gemm_tt", "mn", "fp8_gemm_nt with A given as [K, M] (a transposed view of [M, K]).")
