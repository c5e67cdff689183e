"""Element-wise accuracy checks against float64 references of dequantised inputs (re-exported by hopgemm.testing).

One calc_diff over a whole output averages a wrong tile away (a wrong 128x128 tile of a 4095x7176 output moves it by
about 5e-4): these checks bound every element instead, by the rounding its own dot product can carry, and name the tiles
that fail. Torch tensors or NumPy arrays (FP8 NumPy arrays as ml_dtypes.float8_e4m3fn).
"""
import json
import os
import random
from typing import Any, Optional, Sequence, Tuple, Union

from ._tensors import is_torch_tensor

# Rounding of one output element into its dtype, relative to the value rounded: half an ulp of BF16 (8 significant
# bits) or FP32 (24), doubled for FP32 where the accumulator and C are two roundings.
OUTPUT_EPS = {"bfloat16": 2.0**-8, "float32": 2.0**-23}

# The FP8 tensor cores' accumulation error relative to the error scale of fp8_gemm_reference (per 128-deep K block, the
# product of the operands' norms): Hopper keeps about 14 bits of the running sum within a block, the promotion into
# FP32 adds 2^-24 per block. Measured over the GPU suites (docs/RELIABILITY.md, scripts/accuracy_summary.py): the
# largest (|d - ref| - output rounding) / scale is ~2^-12, at K of one to four blocks (K-grouped groups of K = 256);
# at K >= 8192 it stays under 1e-4. The bound is about 4x that largest ratio (at 2^-12 correct kernels fail).
FP8_ACC_TOL = 2.0**-10


def _as_float64(x):
    if is_torch_tensor(x):
        return x.double()
    import numpy as np

    return np.asarray(x).astype(np.float64)


def _repeat(x, times, axis):
    if is_torch_tensor(x):
        return x.repeat_interleave(times, dim=axis)
    import numpy as np

    return np.repeat(x, times, axis=axis)


def _zeros(like, shape):
    if is_torch_tensor(like):
        return like.new_zeros(shape)
    import numpy as np

    return np.zeros(shape, dtype=like.dtype)


def _numel(x):
    return x.numel() if is_torch_tensor(x) else x.size


def _argwhere(mask):
    if is_torch_tensor(mask):
        return mask.nonzero().tolist()
    import numpy as np

    return np.argwhere(mask).tolist()


def block_magnitudes(length: int, block: int, seed: int = 0) -> list:
    """`length` powers of two from 2^-3 to 2^3, constant over each run of `block` indices and different from the
    previous run's: test inputs multiplied by them per row (block 1), per 128-row block or per 128-deep K block make
    every scale block distinct, so a scale, tile or strip taken from a neighbouring block changes the result (exactly
    representable in BF16 and FP32)."""
    rng = random.Random(seed)
    exponent = rng.randrange(7)
    out = []
    for start in range(0, length, block):
        exponent = (exponent + rng.randint(1, 6)) % 7
        out.extend([2.0 ** (exponent - 3)] * min(block, length - start))
    return out


def fp8_gemm_inputs(m: int, n: int, k: int, gran_b_mn: int = 128, seed: int = 0) -> Tuple[Any, Any, Any, Any]:
    """Random FP8 GEMM operands on the current CUDA device: normal values times block_magnitudes per row of A, per
    128-row block of B and per 128-deep K block of each, rounded to BF16 and cast by hopgemm (A per 1 x 128, B per
    gran_b_mn x 128). Returns (a8 [m, k], sfa, b8 [n, k], sfb). Needs torch and a GPU."""
    import torch

    from .utils import per_block_cast_to_fp8, per_token_cast_to_fp8

    def varied(rows, row_block, seed):
        row = torch.tensor(block_magnitudes(rows, row_block, seed), device="cuda")
        col = torch.tensor(block_magnitudes(k, 128, seed + 1), device="cuda")
        return torch.randn(rows, k, device="cuda", generator=g) * row[:, None] * col[None, :]

    g = torch.Generator(device="cuda").manual_seed(seed)
    a8, sfa = per_token_cast_to_fp8(varied(m, 1, seed).to(torch.bfloat16))
    b = varied(n, 128, seed + 2).to(torch.bfloat16)
    b8, sfb = per_token_cast_to_fp8(b) if gran_b_mn == 1 else per_block_cast_to_fp8(b)
    return a8, sfa, b8, sfb


def dequantize(x: Any, sf: Any, gran_mn: int, gran_k: int = 128) -> Any:
    """float64 x * sf: x [R, K], sf [ceil(R / gran_mn), ceil(K / gran_k)] in any strides, each scale applied to its
    gran_mn x gran_k block."""
    rows, k = x.shape
    scales = _repeat(_repeat(_as_float64(sf), gran_mn, 0)[:rows], gran_k, 1)[:, :k]
    return _as_float64(x) * scales


def _block_norms(x, gran_k=128):
    """[R, ceil(K / gran_k)]: the L2 norm of each row's K blocks of float64 x [R, K]."""
    rows, k = x.shape
    blocks = (k + gran_k - 1) // gran_k
    squares = _zeros(x, (rows, blocks * gran_k))
    squares[:, :k] = x * x
    return squares.reshape(rows, blocks, gran_k).sum(2) ** 0.5


def fp8_gemm_reference(a: Any, sfa: Any, b: Any, sfb: Any, gran_b_mn: int, c: Optional[Any] = None) -> Tuple[Any, Any]:
    """(ref, scale), both float64 [M, N]: ref = (A sfa) (B sfb)^T (+ C) of the dequantised inputs, A [M, K] scaled per
    1 x 128 and B [N, K] per gran_b_mn x 128 (128: the 1D2D recipe, 1: 1D1D); scale = the sum over 128-deep K blocks of
    ||A_i,blk|| ||B_j,blk|| (dequantised), an upper bound of sum_k |A_ik B_jk| that each block's rounding in the tensor
    cores is proportional to."""
    a64 = dequantize(a, sfa, 1)
    b64 = dequantize(b, sfb, gran_b_mn)
    ref = a64 @ b64.T
    if c is not None:
        ref = ref + _as_float64(c)
    return ref, _block_norms(a64) @ _block_norms(b64).T


def _failing_tiles(bad, tile):
    """The (..., tile row, tile column) indices of the tile[0] x tile[1] tiles of bad's last two dimensions that hold a
    True, reduced per tile first (a broken kernel fails millions of elements)."""
    *lead, rows, cols = bad.shape
    tile_rows, tile_cols = -(-rows // tile[0]), -(-cols // tile[1])
    padded = _zeros(bad, (*lead, tile_rows * tile[0], tile_cols * tile[1]))
    padded[..., :rows, :cols] = bad
    return [tuple(t) for t in _argwhere(padded.reshape(*lead, tile_rows, tile[0], tile_cols, tile[1]).any(-1).any(-2))]


def assert_close_elementwise(out: Any, ref: Any, bound: Union[float, Any], tile: Sequence[int] = (128, 128),
                             name: str = "output") -> None:
    """Every element of `out` (two or more dimensions) within `bound` (a number or one per element) of float64 `ref`;
    NaN or Inf fails. The AssertionError names how many elements fail, the tile[0] x tile[1] tiles of the last two
    dimensions that hold them, and the worst element with its value, reference and bound."""
    if _numel(ref) == 0:
        return
    err = abs(_as_float64(out) - ref)
    bad = ~(err <= bound)
    if not bad.any():
        return
    excess = err - bound
    excess[bad & ~(excess <= float("inf"))] = float("inf")  # NaN: as bad as it gets
    index, flat = [], int(excess.argmax())
    for size in reversed(tuple(ref.shape)):
        index.insert(0, flat % size)
        flat //= size
    index = tuple(index)
    bound_at = bound if isinstance(bound, (int, float)) else float(bound[index])
    tiles = _failing_tiles(bad, tile)
    shown = ", ".join(
        f"[{', '.join(str(i) for i in t[:-2])}{', ' if len(t) > 2 else ''}"
        f"rows {t[-2] * tile[0]}-{(t[-2] + 1) * tile[0] - 1}, cols {t[-1] * tile[1]}-{(t[-1] + 1) * tile[1] - 1}]"
        for t in tiles[:4])
    raise AssertionError(
        f"{name}: {int(bad.sum())} of {_numel(err)} elements outside their bound, "
        f"in {len(tiles)} {tile[0]}x{tile[1]} tile(s): {shown}{' ...' if len(tiles) > 4 else ''}; worst at "
        f"{list(index)}: {float(out[index])} against {float(ref[index])} (bound {bound_at:.3g})")


def accumulation_error_ratio(d: Any, ref: Any, scale: Any, rounding: Any) -> float:
    """max over the elements of (|d - ref| - rounding) / scale: the smallest acc_tol with which
    assert_fp8_gemm_close would pass `d` (elements with scale 0, and NaN, left out: no acc_tol decides those)."""
    if _numel(ref) == 0:
        return 0.0
    ratio = (abs(_as_float64(d) - ref) - rounding) / scale
    valid = (scale > 0) & (ratio == ratio)
    return float(ratio[valid].max()) if valid.any() else 0.0


def _log_accuracy(name: str, ratio: float, k: int) -> None:
    """Appends one JSON line {test, name, k, ratio} to $HOPGEMM_ACCURACY_LOG where it is set (the measurement of the
    kernels' error over the test suites behind FP8_ACC_TOL: docs/RELIABILITY.md)."""
    path = os.environ.get("HOPGEMM_ACCURACY_LOG")
    if path:
        line = {"test": os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" (", 1)[0], "name": name, "k": k,
                "ratio": ratio}
        with open(path, "a") as f:
            f.write(json.dumps(line) + "\n")


def assert_fp8_gemm_close(d: Any, a: Any, sfa: Any, b: Any, sfb: Any, gran_b_mn: int, c: Optional[Any] = None,
                          acc_tol: float = FP8_ACC_TOL, name: str = "d") -> None:
    """An FP8 GEMM's output against fp8_gemm_reference, element by element: |d - ref| <= acc_tol * scale +
    OUTPUT_EPS[d's dtype] * (|ref| + |ref - C|), the last term where C is given (the product may be rounded to d's dtype
    before C is added to it, as a BF16 TMA reduce-add does). Returns ref (for further checks such as calc_diff).
    With $HOPGEMM_ACCURACY_LOG set, each call first appends the acc_tol its output needed (accumulation_error_ratio)."""
    ref, scale = fp8_gemm_reference(a, sfa, b, sfb, gran_b_mn, c)
    rounded = abs(ref) if c is None else abs(ref) + abs(ref - _as_float64(c))
    rounding = OUTPUT_EPS[str(d.dtype).rsplit(".", 1)[-1]] * rounded
    if os.environ.get("HOPGEMM_ACCURACY_LOG"):
        _log_accuracy(name, accumulation_error_ratio(d, ref, scale, rounding), int(a.shape[-1]))
    assert_close_elementwise(d, ref, acc_tol * scale + rounding, name=name)
    return ref
