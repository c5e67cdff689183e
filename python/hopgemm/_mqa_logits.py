"""DeepSeek-V3.2 indexer ops with deep_gemm's names, parameters and semantics (its older names and the newer
``fp8_fp4_*`` ones). The kernels are in the C++ library; this module allocates their outputs as deep_gemm does:
logits are a view [rows, cols] of a buffer whose row stride is a multiple of 1024 bytes.

Beyond deep_gemm on SM90: heads 32, 64 and 128; next_n 1 to 4; block-table entries of -1 are empty blocks (-inf);
clean_logits with 2-D context lengths; 1-D context lengths (query t of request b sees tokens j <= ctx[b] - next_n + t).
stream: None (torch's current stream of the tensors' device), an int cudaStream_t, a torch.cuda.Stream, or any object
with __cuda_stream__."""
from __future__ import annotations

from typing import Any, Optional, Tuple, Union

from . import _C
from ._tensors import Tensor, empty, empty_strided, shape_of

__all__ = [
    "fp8_mqa_logits",
    "fp8_fp4_mqa_logits",
    "get_paged_mqa_logits_metadata",
    "fp8_paged_mqa_logits",
    "fp8_fp4_paged_mqa_logits",
]

_STAGE_KV = 256  # KV tokens per stage of the kernels (deep_gemm's block_kv / split_kv)


def _align(x: int, a: int) -> int:
    return (x + a - 1) // a * a


def _logits_dtype_name(logits_dtype: Any) -> str:
    name = str(logits_dtype).rsplit(".", 1)[-1]
    if name not in ("float32", "bfloat16"):
        raise ValueError(f"logits_dtype must be float32 or bfloat16, got {logits_dtype!r}")
    return name


def _fp8_q(q: Union[Tensor, Tuple[Tensor, Optional[Tensor]]], op: str) -> Tensor:
    if isinstance(q, (tuple, list)):
        if len(q) != 2:
            raise ValueError(f"{op}: q must be a tensor or a (q, q_sf) pair, got {len(q)} items")
        q, q_sf = q
        if q_sf is not None:
            raise NotImplementedError(f"{op}: FP4 queries (q_sf given) need SM100; SM90 takes FP8 q with q_sf=None")
    return q


def _logits(like: Tensor, rows: int, cols: int, buffer_cols: int, dtype: str) -> Tensor:
    stride = _C.mqa_logits_row_stride(buffer_cols, dtype == "bfloat16")
    return empty_strided(like, (rows, cols), (stride, 1), dtype, "q")


def fp8_fp4_mqa_logits(q: Union[Tensor, Tuple[Tensor, Optional[Tensor]]], kv: Tuple[Tensor, Tensor], weights: Tensor,
                       cu_seq_len_k_start: Tensor, cu_seq_len_k_end: Tensor, clean_logits: bool = True,
                       max_seqlen_k: int = 0, logits_dtype: Any = "float32", stream: Any = None) -> Tensor:
    """Prefill indexer logits: q [S, H, D] e4m3 (or (q, None)), kv = (kv [S_kv, D] e4m3, kv_sf [S_kv] FP32),
    weights [S, H] FP32, cu_seq_len_k_start / end [S] int32 (query i sees KV tokens [ks[i], ke[i])).
    Returns logits [S, S_kv] (FP32 or BF16), out[i, j] = sum_h relu(q[i, h] . kv[j] * kv_sf[j]) * weights[i, h]; with
    clean_logits -inf outside [ks[i], ke[i]). max_seqlen_k > 0 (clean_logits=False): [S, max_seqlen_k], logit j of
    row i at column j - ks[i]."""
    q = _fp8_q(q, "fp8_fp4_mqa_logits")
    kv_fp8, kv_sf = kv
    dtype = _logits_dtype_name(logits_dtype)
    s, s_kv = shape_of(q)[0], shape_of(kv_fp8)[0]
    if max_seqlen_k and max_seqlen_k > 0:
        logits = _logits(q, s, max_seqlen_k, _align(max_seqlen_k, _STAGE_KV), dtype)
    else:
        logits = _logits(q, s, s_kv, s_kv + _STAGE_KV, dtype)
    _C.fp8_mqa_logits(q, kv_fp8, kv_sf, weights, cu_seq_len_k_start, cu_seq_len_k_end, logits, clean_logits,
                      max_seqlen_k, stream)
    return logits


def fp8_mqa_logits(q: Tensor, kv: Tuple[Tensor, Tensor], weights: Tensor, cu_seq_len_k_start: Tensor,
                   cu_seq_len_k_end: Tensor, clean_logits: bool = True, max_seqlen_k: int = 0,
                   stream: Any = None) -> Tensor:
    """deep_gemm's older name of fp8_fp4_mqa_logits, FP32 logits."""
    return fp8_fp4_mqa_logits(q, kv, weights, cu_seq_len_k_start, cu_seq_len_k_end, clean_logits, max_seqlen_k,
                              "float32", stream)


def get_paged_mqa_logits_metadata(context_lens: Tensor, block_kv: int, num_sms: int,
                                  indices: Optional[Tensor] = None, stream: Any = None) -> Tensor:
    """The schedule of fp8_paged_mqa_logits over num_sms SMs: int32 [num_sms + 1, 2]. context_lens [B] or
    [B, next_n] int32; block_kv must be 64 on SM90. Recompute it whenever context_lens change (it is a kernel:
    capture it in the same CUDA graph as the logits)."""
    if indices is not None:
        raise NotImplementedError("get_paged_mqa_logits_metadata: indices (varlen) need SM100")
    if num_sms < 1:
        raise ValueError(f"get_paged_mqa_logits_metadata: num_sms must be >= 1, got {num_sms}")
    meta = empty(context_lens, (num_sms + 1, 2), "int32", "context_lens")
    _C.get_paged_mqa_logits_metadata(context_lens, block_kv, meta, stream)
    return meta


def fp8_fp4_paged_mqa_logits(q: Union[Tensor, Tuple[Tensor, Optional[Tensor]]], kv_cache: Tensor, weights: Tensor,
                             context_lens: Tensor, block_table: Tensor, schedule_meta: Tensor, max_context_len: int,
                             clean_logits: bool = False, logits_dtype: Any = "float32",
                             indices: Optional[Tensor] = None, stream: Any = None) -> Tensor:
    """Decode indexer logits: q [B, next_n, H, D] e4m3 (or (q, None)), kv_cache uint8 [num_blocks, 64, 1, D + 4]
    (per block 64 x D FP8 values then 64 FP32 scales), weights [B * next_n, H] FP32, context_lens [B] or [B, next_n]
    int32, block_table [B, max_blocks] int32 (-1: an empty block), schedule_meta from get_paged_mqa_logits_metadata.
    Returns logits [B * next_n, max_context_len] (FP32 or BF16); with clean_logits -inf wherever a query may not
    look."""
    q = _fp8_q(q, "fp8_fp4_paged_mqa_logits")
    if indices is not None:
        raise NotImplementedError("fp8_fp4_paged_mqa_logits: indices (varlen) need SM100")
    dtype = _logits_dtype_name(logits_dtype)
    shape = shape_of(q)
    rows = shape[0] * shape[1] if len(shape) == 4 else 0
    logits = _logits(q, rows, max_context_len, _align(max_context_len, _STAGE_KV), dtype)
    _C.fp8_paged_mqa_logits(q, kv_cache, weights, context_lens, block_table, schedule_meta, logits, clean_logits,
                            stream)
    return logits


def fp8_paged_mqa_logits(q: Tensor, kv_cache: Tensor, weights: Tensor, context_lens: Tensor, block_table: Tensor,
                         schedule_meta: Tensor, max_context_len: int, clean_logits: bool = False,
                         indices: Optional[Tensor] = None, stream: Any = None) -> Tensor:
    """deep_gemm's older name of fp8_fp4_paged_mqa_logits, FP32 logits."""
    return fp8_fp4_paged_mqa_logits(q, kv_cache, weights, context_lens, block_table, schedule_meta, max_context_len,
                                    clean_logits, "float32", indices, stream)
