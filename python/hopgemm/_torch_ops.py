"""hopgemm's ops registered with torch.library (namespace ``torch.ops.hopgemm``), for torch.compile, opcheck
and CUDA graphs captured by torch.

Importing this module registers the ops; it imports torch. ``hopgemm`` imports it for you: at ``import
hopgemm`` when torch is already imported, else right after the first ``import torch`` (a post-import hook),
or when you call ``hopgemm.register_torch_ops()`` / read ``hopgemm.torch_ops``.

The plain functions (``hopgemm.fp8_gemm_nt``, ``hopgemm.utils.per_token_cast_to_fp8``, ...) call these ops only
while torch.compile traces them (hopgemm/_dispatch.py); eagerly they call the extension directly, since the
dispatcher adds several microseconds per call.

Ops (all on CUDA tensors; ``d`` is written in place, every other op returns new tensors, never an input):

    fp8_gemm_nt(Tensor a, Tensor sfa, Tensor b, Tensor sfb, Tensor(a!) d, Tensor? c=None, SymInt[]? recipe=None,
                SymInt[]? recipe_a=None, SymInt[]? recipe_b=None) -> ()
    fp8_gemm_nn / fp8_gemm_tn / fp8_gemm_tt: the same schema
    m_grouped_fp8_gemm_nt_contiguous(Tensor a, Tensor sfa, Tensor b, Tensor sfb, Tensor(a!) d,
                Tensor? grouped_layout=None, SymInt[]? recipe=None, SymInt[]? recipe_a=None, SymInt[]? recipe_b=None,
                bool use_psum_layout=False, SymInt? expected_m_for_psum_layout=None, Tensor? m_indices=None,
                bool use_packed_layout=False, bool zero_padding_blocks=True) -> ()
    m_grouped_fp8_gemm_nn_contiguous: the same schema
    m_grouped_fp8_gemm_nt_masked(Tensor a, Tensor sfa, Tensor b, Tensor sfb, Tensor(a!) d, Tensor masked_m,
                SymInt expected_m, SymInt[]? recipe=None, SymInt[]? recipe_a=None, SymInt[]? recipe_b=None) -> ()
    k_grouped_fp8_gemm_nt_contiguous(Tensor a, Tensor sfa, Tensor b, Tensor sfb, Tensor(a!) d, SymInt[] ks,
                Tensor ks_tensor, Tensor? c, SymInt[] recipe, bool use_psum_layout=False) -> ()
    k_grouped_fp8_gemm_tn_contiguous: the same schema
    per_token_cast_to_fp8(Tensor x, bool use_ue8m0=False, SymInt gran_k=128) -> (Tensor, Tensor)
    per_block_cast_to_fp8 / per_channel_cast_to_fp8: the same schema
    get_mn_major_tma_aligned_tensor(Tensor sf) -> Tensor
    fp8_mqa_logits, get_paged_mqa_logits_metadata, fp8_paged_mqa_logits: the indexer's, hopgemm/_torch_ops_mqa.py

No autograd formulas are registered (FP8 GEMM and quantisation are inference / custom-training building
blocks); backward through these ops raises.
"""
from typing import List, Optional, Tuple

import torch
from torch import Tensor

from . import _C, _dispatch, _einsum, _gemm, _grouped, _hyperconnection, _layout, _ops, _torch_ops_mqa, utils  # noqa: F401 (they declare the ops)

NAMESPACE = "hopgemm"
_E4M3 = torch.float8_e4m3fn

# CustomOpDef objects by op name. torch keeps its own reference too; holding them here makes the lifetime of
# the registrations obvious (a dropped torch.library.Library deregisters its ops).
OPS = {}


def _ceil_div(x, y):
    return (x + y - 1) // y  # also right for SymInts


def _register(name, fn, mutates_args, fake):
    op = torch.library.custom_op(f"{NAMESPACE}::{name}", fn, mutates_args=mutates_args)
    op.register_fake(fake)
    OPS[name] = op
    return op


# ---- FP8 GEMMs, dense and grouped: d written in place ---------------------------------------------------
# compiled_dims, disable_ue8m0_cast and ensure_zero_padding change nothing on SM90: the ops leave them out. The
# kernel checks every argument, so the fake implementations check none.

def _gemm_fake(*args, **kwargs):
    return None  # nothing to allocate: the op only writes d


# Every GEMM op as declared once in hopgemm/_ops.py (by hopgemm/_gemm.py and hopgemm/_grouped.py).
for _op in _ops.OPS.values():
    _register(_op.name, _ops.torch_op_function(_op, _C, {"Tensor": Tensor, "Optional": Optional, "List": List}), _op.mutates,
              _gemm_fake)


# ---- FP8 quantisers: functional, (x_fp8 e4m3 [m, n], sf FP32) -------------------------------------------

def _cast_fake(op):
    def fake(x, use_ue8m0=False, gran_k=128):
        m, n = utils._check_cast_args(op, x.shape, gran_k)
        return x.new_empty((m, n), dtype=_E4M3), x.new_empty(utils._SF_SHAPES[op](m, n, gran_k), dtype=torch.float32)

    return fake


def _make_cast(name):
    def cast(x: Tensor, use_ue8m0: bool = False, gran_k: int = 128) -> Tuple[Tensor, Tensor]:
        return utils._cast_to_fp8(name, x, use_ue8m0, gran_k)

    cast.__name__ = cast.__qualname__ = name
    cast.__doc__ = f"hopgemm.utils.{name} as a torch op: x [m, n] -> (x_fp8, sf), new tensors."
    return cast


for _name in utils._SF_SHAPES:
    _register(_name, _make_cast(_name), (), _cast_fake(_name))


# ---- Scale-factor layout: always a new tensor in the MN-major TMA-aligned layout -------------------------

def mn_major_tma_aligned_strides(shape):
    """Strides (elements) of FP32 scale factors [mn, k] / [G, mn, k] in the MN-major TMA-aligned layout, as
    hopgemm.get_mn_major_tma_aligned_tensor returns them: (1, tma_mn) / (tma_mn * k, 1, tma_mn) with
    tma_mn = get_tma_aligned_size(mn, 4). Works on SymInts (used by the fake implementation)."""
    mn, k = shape[-2], shape[-1]
    tma_mn = _ceil_div(mn, 4) * 4
    return (tma_mn * k, 1, tma_mn) if len(shape) == 3 else (1, tma_mn)


def _check_sf(sf):
    op = "get_mn_major_tma_aligned_tensor"
    if sf.dim() not in (2, 3):
        raise _C.HopgemmValueError(f"{op}: argument 'sf' must be [mn, sf_k] or [G, mn, sf_k], got shape "
                                   f"{list(sf.shape)}")
    if sf.dtype != torch.float32:
        raise _C.HopgemmValueError(f"{op}: argument 'sf' must be float32, got {sf.dtype}")


def _mn_major_fake(sf):
    _check_sf(sf)
    return sf.new_empty_strided(sf.shape, mn_major_tma_aligned_strides(sf.shape), dtype=torch.float32)


def get_mn_major_tma_aligned_tensor(sf: Tensor) -> Tensor:
    """hopgemm.get_mn_major_tma_aligned_tensor as a torch op. Unlike the plain function, which returns `sf`
    itself when it already has the layout, the op always returns a new tensor (a custom op's output may not
    alias an input): a copy with the same strides in that case."""
    _check_sf(sf)
    if _C.is_mn_major_tma_aligned(sf):
        out = torch.empty_strided(sf.shape, mn_major_tma_aligned_strides(sf.shape), dtype=sf.dtype,
                                  device=sf.device)
        out.copy_(sf)
        return out
    return _layout.relayout_mn_major_tma_aligned(sf)


_register("get_mn_major_tma_aligned_tensor", get_mn_major_tma_aligned_tensor, (), _mn_major_fake)

del _name, _op

_torch_ops_mqa.register(_register)  # the DeepSeek-V3.2 indexer ops


def namespace():
    """torch.ops.hopgemm."""
    return getattr(torch.ops, NAMESPACE)


_dispatch.use_torch_ops(torch)


__all__ = ["OPS", "NAMESPACE", "namespace", "mn_major_tma_aligned_strides"]
