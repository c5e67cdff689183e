"""deep_gemm.utils equivalents: integer helpers, UE8M0 rounding, fused FP8 quantisers, layout helpers."""
from typing import Any, Tuple

from . import _C, _dispatch
from ._layout import *  # noqa: F401,F403 (deep_gemm.utils re-exports the layout helpers)
from ._layout import __all__ as _layout_all
from ._tensors import Tensor, empty, is_torch_tensor, shape_of

__all__ = [
    "ceil_div",
    "align",
    "ceil_to_ue8m0",
    "per_token_cast_to_fp8",
    "per_block_cast_to_fp8",
    "per_channel_cast_to_fp8",
] + list(_layout_all)


def ceil_div(x: int, y: int) -> int:
    return (x + y - 1) // y


def align(x: int, y: int) -> int:
    return ceil_div(x, y) * y


def ceil_to_ue8m0(x: Any) -> Any:
    """|x| rounded up to a power of two, bit-exact on the FP32 encoding: the exponent field is incremented
    when the mantissa is non-zero, then clamped to [1, 254] (so zeros, denormals, Inf and NaN map to
    2^-126 .. 2^127). Takes a torch tensor or a NumPy array; returns FP32."""
    if is_torch_tensor(x):
        import torch

        bits = x.abs().float().view(torch.int32)
        exponent = ((bits >> 23) & 0xFF) + ((bits & 0x7FFFFF) != 0).to(torch.int32)
        return (exponent.clamp(1, 254) << 23).view(torch.float32)
    import numpy as np

    bits = np.abs(np.asarray(x, dtype=np.float32)).view(np.int32)
    exponent = ((bits >> 23) & 0xFF) + ((bits & 0x7FFFFF) != 0).astype(np.int32)
    return (np.clip(exponent, 1, 254).astype(np.int32) << 23).view(np.float32)


# Scale-factor shapes of the quantisers for x [m, n]; also used on SymInts by the fake implementations.
_SF_SHAPES = {
    "per_token_cast_to_fp8": lambda m, n, g: (m, ceil_div(n, g)),
    "per_block_cast_to_fp8": lambda m, n, g: (ceil_div(m, g), ceil_div(n, g)),
    "per_channel_cast_to_fp8": lambda m, n, g: (m // g, n),
}


def _check_cast_args(op, shape, gran_k):
    """(m, n) of a quantiser's input of `shape`, or ValueError naming `op` (shared with the fake implementations,
    which pass SymInts)."""
    if gran_k <= 0:
        raise ValueError(f"{op}: gran_k={gran_k} must be positive")
    if len(shape) != 2:
        raise ValueError(f"{op}: argument 'x' must be 2-D [m, n], got shape {list(shape)}")
    m, n = shape
    if op == "per_channel_cast_to_fp8" and m % gran_k != 0:
        raise ValueError(f"{op}: m={m} must be a multiple of gran_k={gran_k}")
    return m, n


def _cast_to_fp8(op, x, use_ue8m0, gran_k):
    """The quantiser `op` run eagerly: new (x_fp8, sf) allocated like x, filled by the fused kernel."""
    gran_k = int(gran_k)
    m, n = _check_cast_args(op, shape_of(x), gran_k)
    x_fp8 = empty(x, (m, n), "float8_e4m3fn")
    sf = empty(x, _SF_SHAPES[op](m, n, gran_k), "float32")
    getattr(_C, op)(x, x_fp8, sf, use_ue8m0, gran_k)
    return x_fp8, sf


def per_token_cast_to_fp8(x: Tensor, use_ue8m0: bool = False, gran_k: int = 128) -> Tuple[Tensor, Tensor]:
    """x [m, n] BF16/FP32 -> (x_fp8 [m, n] e4m3, sf [m, ceil(n / gran_k)] FP32), one scale per row per
    gran_k columns: sf = max(amax, 1e-4) / 448 (rounded up to a power of two with use_ue8m0), x ~= x_fp8 * sf."""
    if _dispatch.is_compiling():
        return _dispatch.ops.per_token_cast_to_fp8(x, use_ue8m0, gran_k)
    return _cast_to_fp8("per_token_cast_to_fp8", x, use_ue8m0, gran_k)


def per_block_cast_to_fp8(x: Tensor, use_ue8m0: bool = False, gran_k: int = 128) -> Tuple[Tensor, Tensor]:
    """x [m, n] -> (x_fp8 [m, n] e4m3, sf [ceil(m / gran_k), ceil(n / gran_k)] FP32), one scale per
    gran_k x gran_k block."""
    if _dispatch.is_compiling():
        return _dispatch.ops.per_block_cast_to_fp8(x, use_ue8m0, gran_k)
    return _cast_to_fp8("per_block_cast_to_fp8", x, use_ue8m0, gran_k)


def per_channel_cast_to_fp8(x: Tensor, use_ue8m0: bool = False, gran_k: int = 128) -> Tuple[Tensor, Tensor]:
    """x [m, n] with m % gran_k == 0 -> (x_fp8 [m, n] e4m3, sf [m / gran_k, n] FP32), one scale per column
    per gran_k rows (K-grouped wgrad operands stored [K, MN])."""
    if _dispatch.is_compiling():
        return _dispatch.ops.per_channel_cast_to_fp8(x, use_ue8m0, gran_k)
    return _cast_to_fp8("per_channel_cast_to_fp8", x, use_ue8m0, gran_k)
