"""DeepGEMM's einsum with its signature: the batched BF16 GEMMs of the expressions it runs on SM90, declared once
(hopgemm/_ops.py: the extension's call, its torch op ``torch.ops.hopgemm.einsum`` and the torch.compile path), and
``use_cublaslt=True``, DeepGEMM's cuBLASLt baseline of the per-head forms (hopgemm/_cublaslt.py, one GEMM per head)."""
from typing import Any, Optional

from . import _C, _dispatch, _ops
from ._ops import Arg
from ._tensors import Tensor

__all__ = ["einsum", "fp8_einsum"]

_DOC = """DeepGEMM's einsum: d (written in place, nothing returned) = the expression over BF16 a and b.

* "bmk,bnk->mn": a [s, m, k], b [s, n, k], d [m, n] BF16 or FP32: d = c + sum over s of a[s] @ b[s]^T, one GEMM
  whose K runs over every batch (split-K where the tiles are few). c (d's dtype) may be d itself (accumulate in place,
  as DeepGEMM's FP32 form takes it) or another tensor (copied first).
* "bhr,hdr->bhd": a [b, h, r], b [h, d, r], d [b, h, d] BF16: for each head h, d[:, h] = a[:, h] @ b[h]^T. No c.
* "bhd,hdr->bhr": a [b, h, d], b [h, d, r], d [b, h, r] BF16: for each head h, d[:, h] = a[:, h] @ b[h] (b read
  MN-major as it is). No c.
The last dimension of each tensor is contiguous; every other stride is free where TMA takes it (16-byte multiples,
16-byte aligned data): slices such as y[:, :, :r] run without a copy. Each form is a batched GEMM of the BF16 family
(3-D descriptors, the batch outermost), the same tiles and pairs as the plain GEMM of one batch.
use_cublaslt=True (the per-head forms): DeepGEMM's cuBLASLt baseline, one hopgemm.cublaslt_gemm_nt per head.
stream: None (torch's current stream), an int cudaStream_t, a torch.cuda.Stream, or any object with __cuda_stream__.
Raises NotImplementedError for another expression, ValueError for invalid arguments, RuntimeError for JIT and CUDA
failures."""

_einsum_op = _ops.declare(_ops.Op("einsum", [
    Arg("expr", "str", torch="str"),
    Arg("a", "Tensor", torch="Tensor"),
    Arg("b", "Tensor", torch="Tensor"),
    Arg("d", "Tensor", torch="Tensor"),
    Arg("c", "Optional[Tensor]", None, torch="Optional[Tensor]"),
    Arg("stream", "Any", None),
], _DOC), _C, _dispatch)


def _cublaslt_einsum(expr, a, b, d, c):
    """DeepGEMM's use_cublaslt=True: cuBLASLt per head (its baseline; DeepGEMM's own is one strided-batched call)."""
    from ._cublaslt import cublaslt_gemm_nt

    if expr not in ("bhr,hdr->bhd", "bhd,hdr->bhr"):
        raise _C.HopgemmValueError(f"einsum: use_cublaslt=True takes 'bhr,hdr->bhd' or 'bhd,hdr->bhr', got '{expr}'")
    if c is not None:
        raise _C.HopgemmValueError(f"einsum: argument 'c' is not taken by '{expr}'")
    for h in range(a.shape[1]):
        rhs = b[h] if expr == "bhr,hdr->bhd" else b[h].transpose(0, 1)
        cublaslt_gemm_nt(a[:, h], rhs, d[:, h])


def einsum(expr: str, a: Tensor, b: Tensor, d: Tensor, c: Optional[Tensor] = None, use_cublaslt: bool = False,
           stream: Any = None) -> None:
    if use_cublaslt:
        return _cublaslt_einsum(expr, a, b, d, c)
    return _einsum_op(expr, a, b, d, c, stream=stream)


einsum.__doc__ = _DOC


_FP8_DOC = """DeepGEMM's fp8_einsum on SM90: "bhr,hdr->bhd" over FP8 e4m3 a=(x, sfx) and b=(y, sfy), d written in place.

x [b, h, r] with sfx [b, h, ceil(r/128)] FP32 per 1x128 (row-major: per_token_cast_to_fp8 of x.view(-1, r) viewed
back), y [h, d, r] with sfy [h, ceil(d/128), ceil(r/128)] FP32 per 128x128 block (per_block_cast_to_fp8 of each head),
d [b, h, d] BF16 or FP32: for each head h, d[:, h] = (x[:, h] * sfx) @ (y[h] * sfy)^T. recipe must be (1, 128, 128);
no c (DeepGEMM's SM90 kernel takes none). A batched 1D2D FP8 GEMM (3-D descriptors, the batch outermost), the same
tiles as the plain GEMM of one head. DeepGEMM's other forms ("bhd,hdr->bhr", "bhd,bhr->hdr") are SM100-only there:
NotImplementedError. stream: as the GEMMs take it."""

fp8_einsum = _ops.declare(_ops.Op("fp8_einsum", [
    Arg("expr", "str", torch="str"),
    Arg("a", "Tuple[Tensor, Tensor]", torch="Tensor", pair=("a", "sfa")),
    Arg("b", "Tuple[Tensor, Tensor]", torch="Tensor", pair=("b", "sfb")),
    Arg("d", "Tensor", torch="Tensor"),
    # The torch op takes c and recipe without defaults (a schema's int[] default cannot be a tuple).
    Arg("c", "Optional[Tensor]", None, torch="Optional[Tensor]", torch_default=False),
    Arg("recipe", "Sequence[int]", (1, 128, 128), torch="List[int]", torch_default=False),
    Arg("stream", "Any", None),
], _FP8_DOC), _C, _dispatch)
