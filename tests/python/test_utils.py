"""hopgemm.utils and hopgemm.testing semantics that need no GPU."""
import math

import numpy as np
import pytest

import hopgemm
from hopgemm.testing import calc_diff, count_bytes
from hopgemm.utils import align, ceil_div, ceil_to_ue8m0

from conftest import requires_torch


def test_integer_helpers():
    assert ceil_div(0, 128) == 0
    assert ceil_div(1, 128) == 1
    assert ceil_div(256, 128) == 2
    assert ceil_div(257, 128) == 3
    assert align(1, 128) == 128
    assert align(4096, 128) == 4096
    assert align(4097, 128) == 4224


def _ue8m0_reference(v):
    """Smallest power of two >= |v|, for normal finite non-zero FP32 v, within [2^-126, 2^127]."""
    v = abs(float(v))
    mantissa, exponent = math.frexp(v)  # v = mantissa * 2^exponent, mantissa in [0.5, 1)
    power = exponent - 1 if mantissa == 0.5 else exponent
    return 2.0 ** min(max(power, -126), 127)


def test_ceil_to_ue8m0_numpy_bit_exact():
    rng = np.random.default_rng(0)
    values = np.concatenate([
        rng.standard_normal(1000).astype(np.float32) * 10.0 ** rng.integers(-30, 30, 1000),
        np.array([1.0, -1.0, 1.5, 2.0, 0.75, 448.0, 1e-4 / 448, 3.0e38], dtype=np.float32),
    ]).astype(np.float32)
    got = ceil_to_ue8m0(values)
    assert got.dtype == np.float32
    expected = np.array([_ue8m0_reference(v) for v in values], dtype=np.float32)
    np.testing.assert_array_equal(got, expected)
    # Mantissa bits are always zero.
    assert not np.any(got.view(np.int32) & 0x7FFFFF)


def test_ceil_to_ue8m0_edges():
    got = ceil_to_ue8m0(np.array([0.0, np.float32(2.0 ** -130), np.inf, 3.0e38], dtype=np.float32))
    # Zero and denormals clamp to the smallest exponent; Inf and values above 2^127 to the largest.
    np.testing.assert_array_equal(got, np.array([2.0 ** -126, 2.0 ** -126, 2.0 ** 127, 2.0 ** 127], np.float32))


@requires_torch
def test_ceil_to_ue8m0_torch_matches_numpy():
    import torch

    x = torch.randn(4096) * torch.exp(torch.randn(4096) * 20)
    np.testing.assert_array_equal(ceil_to_ue8m0(x).numpy(), ceil_to_ue8m0(x.numpy()))
    assert ceil_to_ue8m0(x.bfloat16()).dtype == torch.float32


def test_calc_diff_semantics():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((64, 32)).astype(np.float32)
    assert calc_diff(x, x) == pytest.approx(0.0, abs=1e-15)
    assert calc_diff(x, -x) == pytest.approx(2.0)
    assert calc_diff(np.zeros(8), np.zeros(8)) == 0.0
    assert calc_diff(x, np.zeros_like(x)) == pytest.approx(1.0)
    y = x + 0.01 * rng.standard_normal(x.shape).astype(np.float32)
    xd, yd = x.astype(np.float64), y.astype(np.float64)
    expected = 1 - 2 * (xd * yd).sum() / (xd * xd + yd * yd).sum()
    assert calc_diff(x, y) == pytest.approx(expected, rel=1e-12)
    assert 0 < calc_diff(x, y) < 1e-3


def test_calc_diff_accumulates_in_float64():
    # In float32 the tiny difference would be lost to rounding; DeepGEMM computes in double.
    x = np.full(1 << 16, 1000.0, dtype=np.float32)
    y = x.copy()
    y[0] += 0.0625
    assert calc_diff(x, y) > 0


@requires_torch
def test_calc_diff_torch_returns_double_tensor():
    import torch

    x = torch.randn(128, 64)
    y = x + 1e-3 * torch.randn(128, 64)
    diff = calc_diff(x, y)
    assert isinstance(diff, torch.Tensor) and diff.dtype == torch.float64
    assert float(diff) == pytest.approx(calc_diff(x.numpy(), y.numpy()), rel=1e-12)
    assert calc_diff(torch.zeros(4), torch.zeros(4)) == 0.0


def test_count_bytes():
    a = np.zeros((4, 8), dtype=np.float32)
    b = np.zeros(16, dtype=np.uint8)
    assert count_bytes(a) == 128
    assert count_bytes(a, b, None) == 144
    assert count_bytes((a, b), [a]) == 272


@requires_torch
def test_count_bytes_torch():
    import torch

    assert count_bytes(torch.zeros(4, 8, dtype=torch.bfloat16), (torch.zeros(3, dtype=torch.float8_e4m3fn), None)) == 67


def test_quantiser_argument_checks():
    x = np.ones((4, 4, 4), dtype=np.float32)
    with pytest.raises(ValueError, match="2-D"):
        hopgemm.per_token_cast_to_fp8(x)
    with pytest.raises(ValueError, match="gran_k"):
        hopgemm.per_block_cast_to_fp8(np.ones((4, 4), np.float32), gran_k=0)
    with pytest.raises(ValueError, match="multiple of gran_k"):
        hopgemm.per_channel_cast_to_fp8(np.ones((100, 4), np.float32))


def test_transform_sf_recipe_checks():
    sf = np.ones((128, 2), dtype=np.float32)
    with pytest.raises(ValueError, match="is_sfa"):
        hopgemm.transform_sf_into_required_layout(sf, 128, 256, (1, 128, 128))
    with pytest.raises(ValueError, match="recipe"):
        hopgemm.transform_sf_into_required_layout(sf, 128, 256, (1,))
