"""hopgemm.testing's element-wise checks, on the CPU: an emulated FP8 GEMM (per-block FP32 dot products promoted with
the scales, as the kernels compute it) passes, and the same output with one tile or one 8x64 strip computed with a
neighbouring block's scale, or with a K block dropped, fails, naming where; the measured error ratio behind the bound
and its log."""
import json

import ml_dtypes
import numpy as np
import pytest

from hopgemm._accuracy import accumulation_error_ratio
from hopgemm.testing import (
    OUTPUT_EPS,
    assert_close_elementwise,
    assert_fp8_gemm_close,
    block_magnitudes,
    calc_diff,
    dequantize,
    fp8_gemm_reference,
)

E4M3 = ml_dtypes.float8_e4m3fn


def quantize(x, gran_mn):
    """x [R, K] float32 -> (E4M3 [R, K], FP32 scales [ceil(R / gran_mn), ceil(K / 128)]), amax / 448 per block."""
    rows, k = x.shape
    rb, kb = -(-rows // gran_mn), -(-k // 128)
    padded = np.zeros((rb * gran_mn, kb * 128), np.float32)
    padded[:rows, :k] = x
    blocks = padded.reshape(rb, gran_mn, kb, 128)
    sf = (np.abs(blocks).max(axis=(1, 3)).clip(1e-4) / 448).astype(np.float32)
    q = (blocks / sf[:, None, :, None]).reshape(padded.shape)[:rows, :k].astype(E4M3)
    return q, sf


def make_inputs(m, n, k, gran_b, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, k), np.float32) * np.outer(block_magnitudes(m, 1, seed),
                                                           block_magnitudes(k, 128, seed + 1))
    b = rng.standard_normal((n, k), np.float32) * np.outer(block_magnitudes(n, 128, seed + 2),
                                                           block_magnitudes(k, 128, seed + 3))
    return (*quantize(a.astype(np.float32), 1), *quantize(b.astype(np.float32), gran_b))


def emulated_gemm(a8, sfa, b8, sfb, gran_b, sfa_of=lambda i, kb: (i, kb), sfb_of=lambda j, kb: (j, kb)):
    """FP32 D as the kernels form it: per 128-deep K block an FP32 dot product of the E4M3 values, promoted with
    sfa[row, block] * sfb[row or row block, block]. sfa_of / sfb_of map (row index array, block) to the scale read."""
    m, k = a8.shape
    n = b8.shape[0]
    rows, cols = np.arange(m), np.arange(n) // gran_b
    d = np.zeros((m, n), np.float32)
    for kb in range(-(-k // 128)):
        blk = slice(kb * 128, (kb + 1) * 128)
        acc = a8[:, blk].astype(np.float32) @ b8[:, blk].astype(np.float32).T
        d += acc * sfa[sfa_of(rows, kb)][:, None] * sfb[sfb_of(cols, kb)][None, :]
    return d


M, N, K = 320, 512, 896  # 7 K blocks; M not a multiple of 128


@pytest.mark.parametrize("gran_b", [128, 1])
@pytest.mark.parametrize("out_dtype", [ml_dtypes.bfloat16, np.float32])
def test_emulated_gemm_passes(gran_b, out_dtype):
    a8, sfa, b8, sfb = make_inputs(M, N, K, gran_b, seed=1)
    d = emulated_gemm(a8, sfa, b8, sfb, gran_b).astype(out_dtype)
    ref = assert_fp8_gemm_close(d, a8, sfa, b8, sfb, gran_b)
    assert calc_diff(d, ref) < 1e-5


def test_emulated_gemm_with_c_passes():
    a8, sfa, b8, sfb = make_inputs(M, N, K, 1, seed=2)
    c = np.random.default_rng(3).standard_normal((M, N), np.float32) * 32
    d = emulated_gemm(a8, sfa, b8, sfb, 1) + c
    assert_fp8_gemm_close(d, a8, sfa, b8, sfb, 1, c=c)
    with pytest.raises(AssertionError):
        assert_fp8_gemm_close(d, a8, sfa, b8, sfb, 1)  # C left out of the reference


def wrong_region(good, bad, rows, cols):
    out = good.copy()
    out[rows, cols] = bad[rows, cols]
    return out


@pytest.mark.parametrize("out_dtype", [ml_dtypes.bfloat16, np.float32])
def test_one_tile_with_the_neighbouring_b_scale_block_fails(out_dtype):
    a8, sfa, b8, sfb = make_inputs(M, N, K, 128, seed=4)
    good = emulated_gemm(a8, sfa, b8, sfb, 128)
    shifted = emulated_gemm(a8, sfa, b8, sfb, 128, sfb_of=lambda j, kb: (np.minimum(j + 1, sfb.shape[0] - 1), kb))
    d = wrong_region(good, shifted, slice(128, 256), slice(128, 256)).astype(out_dtype)
    with pytest.raises(AssertionError, match=r"in 1 128x128 tile\(s\): \[rows 128-255, cols 128-255\]"):
        assert_fp8_gemm_close(d, a8, sfa, b8, sfb, 128)


@pytest.mark.parametrize("gran_b", [128, 1])
def test_an_8x64_strip_with_the_next_k_blocks_a_scale_fails(gran_b):
    a8, sfa, b8, sfb = make_inputs(M, N, K, gran_b, seed=5)
    good = emulated_gemm(a8, sfa, b8, sfb, gran_b)
    shifted = emulated_gemm(a8, sfa, b8, sfb, gran_b, sfa_of=lambda i, kb: (i, min(kb + 1, sfa.shape[1] - 1)))
    d = wrong_region(good, shifted, slice(200, 208), slice(64, 128)).astype(ml_dtypes.bfloat16)
    with pytest.raises(AssertionError, match=r"in 1 128x128 tile\(s\): \[rows 128-255, cols 0-127\]"):
        assert_fp8_gemm_close(d, a8, sfa, b8, sfb, gran_b)


def test_one_k_block_of_one_tile_with_the_next_rows_scale_fails():
    # The smallest scale slip: one of seven K blocks, in one 64x64 tile, promoted with the next row's A scale.
    a8, sfa, b8, sfb = make_inputs(M, N, K, 128, seed=6)
    good = emulated_gemm(a8, sfa, b8, sfb, 128)
    shifted = emulated_gemm(a8, sfa, b8, sfb, 128,
                            sfa_of=lambda i, kb: (np.minimum(i + 1, M - 1) if kb == 3 else i, kb))
    d = wrong_region(good, shifted, slice(64, 128), slice(256, 320)).astype(ml_dtypes.bfloat16)
    with pytest.raises(AssertionError, match=r"rows 0-127, cols 256-383"):
        assert_fp8_gemm_close(d, a8, sfa, b8, sfb, 128)


def test_unwritten_elements_fail():
    a8, sfa, b8, sfb = make_inputs(M, N, K, 128, seed=7)
    d = emulated_gemm(a8, sfa, b8, sfb, 128)
    d[319, 511] = np.nan
    with pytest.raises(AssertionError, match=r"1 of 163840 elements .* worst at \[319, 511\]: nan"):
        assert_fp8_gemm_close(d, a8, sfa, b8, sfb, 128)


def test_elementwise_bound_reports_tiles_of_any_rank():
    ref = np.zeros((2, 300, 300))
    out = ref.copy()
    out[1, 130, 5] = 1.0
    out[1, 290, 290] = np.inf
    with pytest.raises(AssertionError, match=r"2 of 180000 elements outside their bound, in 2 128x128 tile\(s\): "
                                             r"\[1, rows 128-255, cols 0-127\], \[1, rows 256-383, cols 256-383\]; "
                                             r"worst at \[1, 290, 290\]: inf"):
        assert_close_elementwise(out, ref, 0.5)
    assert_close_elementwise(out[0], ref[0], 0.0)
    assert_close_elementwise(np.zeros((0, 4)), np.zeros((0, 4)), 0.0)
    bound = np.full((2, 300, 300), 0.5)
    bound[1, 130, 5] = 1.0
    with pytest.raises(AssertionError, match=r"1 of 180000 .* \(bound 0\.5\)"):
        assert_close_elementwise(out, ref, bound, name="d")


def test_dequantize_spreads_each_scale_over_its_block_in_any_layout():
    x = np.ones((130, 200), np.float32).astype(E4M3)
    sf = np.arange(1.0, 5.0, dtype=np.float32).reshape(2, 2)
    out = dequantize(x, np.asfortranarray(sf), 128)
    assert out.dtype == np.float64 and out.shape == (130, 200)
    assert out[127, 127] == 1 and out[127, 128] == 2 and out[128, 0] == 3 and out[129, 199] == 4


def test_reference_error_scale_bounds_the_absolute_products():
    a8, sfa, b8, sfb = make_inputs(64, 64, 300, 1, seed=8)
    ref, scale = fp8_gemm_reference(a8, sfa, b8, sfb, 1)
    a, b = dequantize(a8, sfa, 1), dequantize(b8, sfb, 1)
    assert np.allclose(ref, a @ b.T, rtol=1e-12)
    assert (np.abs(a) @ np.abs(b).T <= scale * (1 + 1e-12)).all()


def test_block_magnitudes():
    mags = block_magnitudes(1000, 128, seed=3)
    assert len(mags) == 1000 and mags == block_magnitudes(1000, 128, seed=3)
    per_block = mags[::128]
    assert all(mags[i] == per_block[i // 128] for i in range(1000))
    assert all(x != y for x, y in zip(per_block, per_block[1:]))
    assert set(block_magnitudes(5000, 1, seed=0)) == {2.0**e for e in range(-3, 4)}
    assert block_magnitudes(0, 1) == []


def test_accumulation_error_ratio_is_the_tolerance_an_output_needs():
    # The measurement behind FP8_ACC_TOL: the smallest acc_tol with which the output passes, up to float64 rounding.
    a8, sfa, b8, sfb = make_inputs(M, N, K, 1, seed=9)
    d = emulated_gemm(a8, sfa, b8, sfb, 1)
    ref, scale = fp8_gemm_reference(a8, sfa, b8, sfb, 1)
    rounding = OUTPUT_EPS["float32"] * np.abs(ref)
    assert accumulation_error_ratio(d, ref, scale, rounding) < 2.0**-18  # FP32 dot products per block: exact-ish
    d[100, 200] = ref[100, 200] + 3e-4 * scale[100, 200] + rounding[100, 200]
    ratio = accumulation_error_ratio(d, ref, scale, rounding)
    assert abs(ratio - 3e-4) < 1e-9
    assert_fp8_gemm_close(d, a8, sfa, b8, sfb, 1, acc_tol=ratio * 1.0001)
    with pytest.raises(AssertionError, match=r"1 of 163840 elements .* worst at \[100, 200\]"):
        assert_fp8_gemm_close(d, a8, sfa, b8, sfb, 1, acc_tol=ratio * 0.9999)


def test_accuracy_log_records_each_check(tmp_path, monkeypatch):
    log = tmp_path / "accuracy.jsonl"
    monkeypatch.setenv("HOPGEMM_ACCURACY_LOG", str(log))
    a8, sfa, b8, sfb = make_inputs(64, 128, 256, 128, seed=10)
    assert_fp8_gemm_close(emulated_gemm(a8, sfa, b8, sfb, 128), a8, sfa, b8, sfb, 128, name="out")
    assert_fp8_gemm_close(emulated_gemm(a8, sfa, b8, sfb, 128), a8, sfa, b8, sfb, 128, name="again")
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(x["name"], x["k"]) for x in lines] == [("out", 256), ("again", 256)]
    assert all(0 <= x["ratio"] < 2.0**-18 for x in lines)
    assert "test_accuracy_log_records_each_check" in lines[0]["test"]


def test_a_dropped_k_block_fails():
    # A kernel that skips one K block: the block of the largest magnitude product in this draw.
    a8, sfa, b8, sfb = make_inputs(M, N, K, 128, seed=11)
    a, b = dequantize(a8, sfa, 1), dequantize(b8, sfb, 128)
    products = [np.abs(a[:, kb * 128:(kb + 1) * 128]).sum() * np.abs(b[:, kb * 128:(kb + 1) * 128]).sum()
                for kb in range(K // 128)]
    dropped = int(np.argmax(products))
    keep = np.ones(K, bool)
    keep[dropped * 128:(dropped + 1) * 128] = False
    d = emulated_gemm(np.where(keep, a8, E4M3(0)), sfa, b8, sfb, 128)
    with pytest.raises(AssertionError, match="elements outside their bound"):
        assert_fp8_gemm_close(d, a8, sfa, b8, sfb, 128)
