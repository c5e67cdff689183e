"""deep_gemm.mega: DeepGEMM's Mega MoE (one fused kernel doing expert-parallel dispatch, both grouped GEMMs and
combine over symmetric memory) is built on SM100 instructions (tcgen05 MMA, tensor memory) and FP4 weights, and
exists on Blackwell only. hopgemm targets Hopper (SM90): these names are here with DeepGEMM's signatures so that code
probing for them gets a NotImplementedError that says so, not an AttributeError. On SM90, build the layer from
m_grouped_fp8_gemm_nt_contiguous / _masked and torch.distributed all-to-all."""
from __future__ import annotations

from typing import Any, Optional, Tuple, Union

__all__ = ["SymmBuffer", "get_symm_buffer_for_mega_moe", "transform_weights_for_mega_moe", "fp8_fp4_mega_moe",
           "bf16_mega_moe"]


def _sm100_only(name: str) -> NotImplementedError:
    return NotImplementedError(
        f"{name}: DeepGEMM's Mega MoE runs on SM100 (Blackwell: tcgen05 MMA, tensor memory, FP4) only; hopgemm "
        "targets SM90 (Hopper). Use m_grouped_fp8_gemm_nt_contiguous / m_grouped_fp8_gemm_nt_masked with "
        "torch.distributed all-to-all instead.")


class SymmBuffer:
    """DeepGEMM's symmetric-memory buffer for the Mega MoE kernel (SM100 only): constructing one raises."""

    def __init__(self, group: Any, num_experts: int, num_max_tokens_per_rank: int, num_topk: int, hidden: int,
                 intermediate_hidden: int, num_ring_tokens: int, mma_type: str = "fp8xfp4",
                 activation: str = "swiglu"):
        raise _sm100_only("SymmBuffer")


def get_symm_buffer_for_mega_moe(group: Any, num_experts: int, num_max_tokens_per_rank: int, num_topk: int,
                                 hidden: int, intermediate_hidden: int, use_fp8_dispatch: Union[bool, None] = None,
                                 mma_type: str = "fp8xfp4", activation: str = "swiglu") -> SymmBuffer:
    """SM100 only: raises NotImplementedError."""
    raise _sm100_only("get_symm_buffer_for_mega_moe")


def transform_weights_for_mega_moe(l1_weights: Any, l2_weights: Any, activation: str = "swiglu") -> Tuple[Any, Any]:
    """SM100 only: raises NotImplementedError."""
    raise _sm100_only("transform_weights_for_mega_moe")


def fp8_fp4_mega_moe(y: Any, l1_weights: Tuple[Any, Any], l2_weights: Tuple[Any, Any], sym_buffer: SymmBuffer,
                     cumulative_local_expert_recv_stats: Optional[Any] = None, recipe: Tuple[int, int, int] = (1, 1, 32),
                     activation: str = "swiglu", activation_clamp: Optional[float] = None,
                     fast_math: bool = True) -> None:
    """SM100 only: raises NotImplementedError."""
    raise _sm100_only("fp8_fp4_mega_moe")


def bf16_mega_moe(y: Any, l1_weights: Any, l2_weights: Any, sym_buffer: SymmBuffer,
                  cumulative_local_expert_recv_stats: Optional[Any] = None, activation: str = "swiglu",
                  activation_clamp: Optional[float] = None, fast_math: bool = True) -> None:
    """SM100 only: raises NotImplementedError."""
    raise _sm100_only("bf16_mega_moe")
