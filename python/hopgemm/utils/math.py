"""deep_gemm.utils.math: integer helpers, UE8M0 rounding and packing, the FP8 quantisers (fused kernels), and
DeepGEMM's FP4 (e2m1) helpers for its SM100 tests (plain torch code: SM90 has no FP4 GEMM to feed)."""
from __future__ import annotations

from typing import Any, Sequence, Tuple

from .. import _C, _dispatch
from .._tensors import Tensor, empty, is_torch_tensor, shape_of

__all__ = [
    "ceil_div",
    "align",
    "ceil_to_ue8m0",
    "pack_ue8m0_to_int",
    "unpack_ue8m0_from_int",
    "per_token_cast_to_fp8",
    "per_block_cast_to_fp8",
    "per_channel_cast_to_fp8",
    "per_custom_dims_cast_to_fp8",
    "per_token_cast_to_fp4",
    "transpose_packed_fp4",
    "cast_back_from_fp4",
]


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


def per_token_cast_to_fp8(x: Tensor, use_ue8m0: bool = False, gran_k: int = 128,
                          use_packed_ue8m0: bool = False) -> Tuple[Tensor, Tensor]:
    """x [m, n] BF16/FP32 -> (x_fp8 [m, n] e4m3, sf [m, ceil(n / gran_k)] FP32), one scale per row per
    gran_k columns: sf = max(amax, 1e-4) / 448 (rounded up to a power of two with use_ue8m0), x ~= x_fp8 * sf.
    use_packed_ue8m0 (with use_ue8m0, torch): sf as pack_ue8m0_to_int packs it, int32 [m, ceil(n / gran_k) / 4]."""
    if use_packed_ue8m0 and not use_ue8m0:
        raise _C.HopgemmValueError("per_token_cast_to_fp8: use_packed_ue8m0=True needs use_ue8m0=True (only "
                                   "power-of-two scales pack into UE8M0 bytes)")
    if _dispatch.is_compiling():
        x_fp8, sf = _dispatch.ops.per_token_cast_to_fp8(x, use_ue8m0, gran_k)
    else:
        x_fp8, sf = _cast_to_fp8("per_token_cast_to_fp8", x, use_ue8m0, gran_k)
    return x_fp8, pack_ue8m0_to_int(sf) if use_packed_ue8m0 else sf


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


# ---- UE8M0 bytes and pure-torch helpers ----------------------------------------------------------------------------
# DeepGEMM's SM100 kernels take power-of-two scales as their 8-bit exponents (UE8M0), four to an int32; its tests
# also quantise to FP4 e2m1 (two codes a byte). These need torch tensors and run as ordinary torch operations.


def pack_ue8m0_to_int(x: Tensor) -> Tensor:
    """FP32 powers of two [..., k] (k % 4 == 0; positive, zero mantissa, as ceil_to_ue8m0 makes them) -> int32
    [..., k / 4]: byte j (least significant first) of each int32 is the biased exponent of element 4i + j."""
    import torch

    if x.dtype != torch.float32 or x.dim() == 0 or x.size(-1) % 4 != 0:
        raise _C.HopgemmValueError("pack_ue8m0_to_int: x must be float32 with a last dimension that is a multiple of "
                                   f"4, got {x.dtype} of shape {list(x.shape)}")
    bits = x.view(torch.int32)
    if bool(((bits < 0) | ((bits & 0x7FFFFF) != 0)).any()):
        raise _C.HopgemmValueError("pack_ue8m0_to_int: every value must be a positive power of two (UE8M0: sign and "
                                   "mantissa zero); round with ceil_to_ue8m0 first")
    return (bits >> 23).to(torch.uint8).view(torch.int32)


def unpack_ue8m0_from_int(packed_sf: Tensor) -> Tensor:
    """The inverse of pack_ue8m0_to_int: int32 [..., k / 4] -> FP32 [..., k], each byte back to 2^(byte - 127)."""
    import torch

    return (packed_sf.contiguous().view(torch.uint8).to(torch.int32) << 23).view(torch.float32)


def per_custom_dims_cast_to_fp8(x: Tensor, dims: Sequence[int], use_ue8m0: bool) -> Tuple[Tensor, Tensor]:
    """x of any rank -> (x_fp8 e4m3 of x's shape, sf FP32): one scale per index of the dimensions `dims`, taken over
    all the other dimensions (sf = max(amax, 1e-4) / 448, a power of two with use_ue8m0), returned with the size-1
    dimensions squeezed out, as DeepGEMM's (e.g. dims=(0,) on [s, d]: one scale per row, sf [s])."""
    import torch

    keep = {d % x.dim() for d in dims}
    reduced = tuple(d for d in range(x.dim()) if d not in keep)
    sf = x.abs().float().amax(dim=reduced, keepdim=True).clamp(min=1e-4) / 448.0
    if use_ue8m0:
        sf = ceil_to_ue8m0(sf)
    return (x * (1.0 / sf)).to(torch.float8_e4m3fn), sf.squeeze()


# FP4 e2m1 magnitudes by code 0..7; code | 8 is the negative value.
_E2M1_VALUES = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0)


def _e2m1_codes(x: Tensor) -> Tensor:
    """Round |x| to the nearest e2m1 magnitude (ties to the smaller one, saturating at 6) and add the sign bit; -0
    becomes +0. Returns uint8 codes 0..15."""
    import torch

    magnitudes = x.abs()
    code = torch.zeros(x.shape, dtype=torch.uint8, device=x.device)
    for low, high in zip(_E2M1_VALUES, _E2M1_VALUES[1:]):
        code += (magnitudes > (low + high) / 2).to(torch.uint8)
    return code | (((x < 0) & (code != 0)).to(torch.uint8) << 3)


def _pack_nibbles(codes: Tensor) -> Tensor:
    """uint8 codes [m, 2c] -> int8 [m, c]: code 2i in the low nibble, 2i + 1 in the high one."""
    import torch

    pairs = codes.view(codes.size(0), -1, 2)
    return ((pairs[..., 0] & 0x0F) | ((pairs[..., 1] & 0x0F) << 4)).view(torch.int8)


def _unpack_nibbles(packed: Tensor) -> Tensor:
    """int8 [m, c] -> uint8 codes [m, 2c] (the inverse of _pack_nibbles)."""
    import torch

    b = packed.view(torch.uint8)
    return torch.stack((b & 0x0F, b >> 4), dim=-1).view(b.size(0), -1)


def per_token_cast_to_fp4(x: Tensor, use_ue8m0: bool, gran_k: int = 128,
                          use_packed_ue8m0: bool = False) -> Tuple[Tensor, Tensor]:
    """x [m, n] (n even) -> (FP4 e2m1 codes packed two a byte, int8 [m, n / 2]; sf FP32 [m, ceil(n / gran_k)]): one
    scale per row per gran_k columns, sf = max(amax, 1e-4) / 6 (a power of two with use_ue8m0). use_packed_ue8m0
    (needs use_ue8m0): sf packed by pack_ue8m0_to_int, padded with 1.0 to a multiple of 4 scales first. DeepGEMM's
    SM100 input format; SM90 has no FP4 GEMM."""
    import torch

    if x.dim() != 2 or x.size(1) % 2 != 0:
        raise _C.HopgemmValueError(f"per_token_cast_to_fp4: x must be 2-D [m, n] with n even, got {list(x.shape)}")
    if use_packed_ue8m0 and not use_ue8m0:
        raise _C.HopgemmValueError("per_token_cast_to_fp4: use_packed_ue8m0=True needs use_ue8m0=True")
    m, n = x.shape
    padded_n = align(n, gran_k)
    padded = torch.zeros((m, padded_n), dtype=x.dtype, device=x.device)
    padded[:, :n] = x
    blocks = padded.view(m, -1, gran_k)
    sf = blocks.abs().float().amax(dim=2).clamp(min=1e-4) / 6.0
    if use_ue8m0:
        sf = ceil_to_ue8m0(sf)
    packed = _pack_nibbles(_e2m1_codes(blocks * (1.0 / sf.unsqueeze(2))).view(m, padded_n))[:, :n // 2].contiguous()
    if use_packed_ue8m0:
        extra = align(sf.size(1), 4) - sf.size(1)
        if extra:  # scales past the last column cover nothing; 1.0 (exponent 127) keeps the packing valid
            sf = torch.nn.functional.pad(sf, (0, extra), value=1.0)
        return packed, pack_ue8m0_to_int(sf)
    return packed, sf


def transpose_packed_fp4(a: Tensor) -> Tensor:
    """Packed FP4 codes int8 [m, n / 2] (m even) -> the packed codes of the transpose, int8 [n, m / 2]."""
    import torch

    if a.dtype != torch.int8 or a.dim() != 2 or a.size(0) % 2 != 0:
        raise _C.HopgemmValueError(f"transpose_packed_fp4: a must be int8 [m, n / 2] with m even, got {a.dtype} of "
                                   f"shape {list(a.shape)}")
    return _pack_nibbles(_unpack_nibbles(a).t().contiguous()).contiguous()


def cast_back_from_fp4(packed: Tensor, sf: Tensor, gran_k: int = 128, use_packed_ue8m0: bool = False) -> Tensor:
    """per_token_cast_to_fp4's output back to FP32 [m, n]: each code's e2m1 value times its row's scale for its
    gran_k columns (sf FP32 [m, >= ceil(n / gran_k)], or packed UE8M0 int32 with use_packed_ue8m0)."""
    import torch

    if use_packed_ue8m0:
        sf = unpack_ue8m0_from_int(sf)
    codes = _unpack_nibbles(packed).to(torch.int64)
    values = torch.tensor(_E2M1_VALUES, dtype=torch.float32, device=packed.device)[codes & 7]
    values = torch.where((codes & 8) != 0, -values, values)
    columns = torch.arange(codes.size(1), device=packed.device) // gran_k
    return values * sf[:, columns]
