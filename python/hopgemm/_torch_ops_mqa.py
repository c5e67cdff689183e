"""The DeepSeek-V3.2 indexer ops as torch.library ops (torch.ops.hopgemm.*), registered by hopgemm/_torch_ops.py
through register(). Functional: each returns a new tensor; the plain functions (hopgemm/_mqa_logits.py) call them
only while torch.compile traces.

    fp8_mqa_logits(Tensor q, Tensor kv, Tensor kv_sf, Tensor weights, Tensor cu_seq_len_k_start,
                   Tensor cu_seq_len_k_end, bool clean_logits=True, SymInt max_seqlen_k=0,
                   ScalarType logits_dtype=float32) -> Tensor
    get_paged_mqa_logits_metadata(Tensor context_lens, SymInt block_kv, SymInt num_sms) -> Tensor
    fp8_paged_mqa_logits(Tensor q, Tensor kv_cache, Tensor weights, Tensor context_lens, Tensor block_table,
                         Tensor schedule_meta, SymInt max_context_len, bool clean_logits=False,
                         ScalarType logits_dtype=float32) -> Tensor

The logits are deep_gemm's padded view: [rows, cols] with a row stride of a multiple of 1024 bytes (the fake
implementations give the same strides, mqa_logits_row_stride). FP4 queries and `indices` (SM100) have no place
in the schemas; the plain functions refuse them before tracing.
"""
import torch
from torch import Tensor

from . import _mqa_logits


def mqa_logits_row_stride(cols, bf16):
    """Row stride (elements) of the padded logits buffer for `cols` columns: hopgemm._C.mqa_logits_row_stride
    written for SymInts (the fake implementations), a multiple of 1024 bytes and at least one row of 1024."""
    per_kb = 512 if bf16 else 256
    return (torch.sym_max(cols, 1) + per_kb - 1) // per_kb * per_kb


def _dtype_name(logits_dtype):
    return _mqa_logits._logits_dtype_name(logits_dtype)


def _logits_fake(like, rows, cols, buffer_cols, dtype_name):
    stride = mqa_logits_row_stride(buffer_cols, dtype_name == "bfloat16")
    return like.new_empty_strided((rows, cols), (stride, 1), dtype=getattr(torch, dtype_name))


# ---- prefill ------------------------------------------------------------------------------------------------------

def fp8_mqa_logits(q: Tensor, kv: Tensor, kv_sf: Tensor, weights: Tensor, cu_seq_len_k_start: Tensor,
                   cu_seq_len_k_end: Tensor, clean_logits: bool = True, max_seqlen_k: int = 0,
                   logits_dtype: torch.dtype = torch.float32) -> Tensor:
    """hopgemm.fp8_fp4_mqa_logits as a torch op: kv and kv_sf passed as two tensors, logits a new padded view."""
    return _mqa_logits.mqa_logits(q, kv, kv_sf, weights, cu_seq_len_k_start, cu_seq_len_k_end, clean_logits,
                                  max_seqlen_k, _dtype_name(logits_dtype), None)


def _mqa_logits_fake(q, kv, kv_sf, weights, cu_seq_len_k_start, cu_seq_len_k_end, clean_logits=True,
                     max_seqlen_k=0, logits_dtype=torch.float32):
    cols, buffer_cols = _mqa_logits.prefill_logits_cols(kv.shape[0], max_seqlen_k)
    return _logits_fake(q, q.shape[0], cols, buffer_cols, _dtype_name(logits_dtype))


# ---- paged --------------------------------------------------------------------------------------------------------

def get_paged_mqa_logits_metadata(context_lens: Tensor, block_kv: int, num_sms: int) -> Tensor:
    """hopgemm.get_paged_mqa_logits_metadata as a torch op: int32 [num_sms + 1, 2]."""
    return _mqa_logits.paged_mqa_logits_metadata(context_lens, block_kv, num_sms, None)


def _metadata_fake(context_lens, block_kv, num_sms):
    return context_lens.new_empty((num_sms + 1, 2), dtype=torch.int32)


def fp8_paged_mqa_logits(q: Tensor, kv_cache: Tensor, weights: Tensor, context_lens: Tensor, block_table: Tensor,
                         schedule_meta: Tensor, max_context_len: int, clean_logits: bool = False,
                         logits_dtype: torch.dtype = torch.float32) -> Tensor:
    """hopgemm.fp8_fp4_paged_mqa_logits as a torch op: logits [B * next_n, max_context_len], a new padded view."""
    return _mqa_logits.paged_mqa_logits(q, kv_cache, weights, context_lens, block_table, schedule_meta,
                                        max_context_len, clean_logits, _dtype_name(logits_dtype), None)


def _paged_mqa_logits_fake(q, kv_cache, weights, context_lens, block_table, schedule_meta, max_context_len,
                           clean_logits=False, logits_dtype=torch.float32):
    rows, cols, buffer_cols = _mqa_logits.paged_logits_rows_cols(q.shape, max_context_len)
    return _logits_fake(q, rows, cols, buffer_cols, _dtype_name(logits_dtype))


OPS = [
    (fp8_mqa_logits, _mqa_logits_fake),
    (get_paged_mqa_logits_metadata, _metadata_fake),
    (fp8_paged_mqa_logits, _paged_mqa_logits_fake),
]


def register(register_op):
    """Registers the indexer ops through hopgemm/_torch_ops.py's register_op(name, fn, mutates_args, fake)."""
    for fn, fake in OPS:
        register_op(fn.__name__, fn, (), fake)
