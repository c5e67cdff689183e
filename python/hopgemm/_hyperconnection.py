"""DeepGEMM's tf32_hc_prenorm_gemm with its signature, declared once (hopgemm/_ops.py: the extension's call, its torch op
``torch.ops.hopgemm.tf32_hc_prenorm_gemm`` mutating d and sqr_sum, and the torch.compile path)."""
from . import _C, _dispatch, _ops
from ._ops import Arg

__all__ = ["tf32_hc_prenorm_gemm"]

_DOC = """DeepGEMM's hyper-connection pre-norm GEMM: d = a @ b^T in TF32 (FP32 sums) and sqr_sum = the sum of the squares of
each row of a, both written in place (nothing returned).

a [M, K] BF16 and b [N, K] FP32, both K-major; N a multiple of 8 up to 32; K a multiple of 8. num_splits None: d [M, N]
and sqr_sum [M] FP32; num_splits = s >= 1: K is cut into s ranges of whole 64-K blocks, d [s, M, N] and sqr_sum [s, M]
hold each range's part (sum them over the first dimension; a range without blocks holds zeros). d row-major,
sqr_sum contiguous. One CTA per (64-row block, split): A is read once, its squares summed from the same registers the
TF32 tensor cores take. stream: None (torch's current stream), an int cudaStream_t, a torch.cuda.Stream, or any object
with __cuda_stream__. Raises NotImplementedError for N outside 8..32, ValueError for invalid arguments, RuntimeError for
JIT and CUDA failures."""

tf32_hc_prenorm_gemm = _ops.declare(_ops.Op("tf32_hc_prenorm_gemm", [
    Arg("a", "Tensor", torch="Tensor"),
    Arg("b", "Tensor", torch="Tensor"),
    Arg("d", "Tensor", torch="Tensor"),
    Arg("sqr_sum", "Tensor", torch="Tensor"),
    Arg("num_splits", "Optional[int]", None, torch="Optional[int]"),
    Arg("stream", "Any", None),
], _DOC, mutates=("d", "sqr_sum")), _C, _dispatch)
