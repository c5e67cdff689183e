"""Inputs and the float64 reference shared by the FP8 GEMM GPU tests (imported after their skip checks)."""
import torch

from hopgemm.utils import per_block_cast_to_fp8, per_token_cast_to_fp8


def make_inputs(m, n, k, recipe_1d1d=False, seed=0):
    """Random BF16 A [m, k] and B [n, k] quantised as the recipe wants: A per 1x128, B per 128x128 (1D2D) or
    per 1x128 (1D1D). Returns (a8, sfa, b8, sfb)."""
    g = torch.Generator(device="cuda").manual_seed(seed)
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16, generator=g)
    b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16, generator=g)
    a8, sfa = per_token_cast_to_fp8(a)
    b8, sfb = per_token_cast_to_fp8(b) if recipe_1d1d else per_block_cast_to_fp8(b)
    return a8, sfa, b8, sfb


def dequant(x8, sf, block_rows):
    """x8 [R, K] FP8 with sf [ceil(R/block_rows), ceil(K/128)] -> float64."""
    r, k = x8.shape
    s = sf.double().repeat_interleave(block_rows, 0)[:r].repeat_interleave(128, 1)[:, :k]
    return x8.double() * s


def reference(a8, sfa, b8, sfb, recipe_1d1d, c=None):
    """float64 (A sfa) (B sfb)^T (+ C) of the dequantised inputs."""
    ref = dequant(a8, sfa, 1) @ dequant(b8, sfb, 1 if recipe_1d1d else 128).T
    return ref if c is None else ref + c.double()


def poisoned(m, n, dtype):
    """An output filled with NaN, so that every element the op fails to write is caught."""
    return torch.full((m, n), float("nan"), device="cuda", dtype=dtype)
