"""hopgemm.testing's grouped-GEMM layouts and checks, on the CPU: the rows each layout gives each group and leaves
untouched, an emulated grouped FP8 GEMM passing, and one wrong group, one written padding row, one empty k-group not
equal to C or one group a fraction off (its own calc_diff) failing with a message that says where; the clamped meaning
of hostile device values (ks_tensor, psum / packed ends) as the kernels compute it."""
import ml_dtypes
import numpy as np
import pytest

from hopgemm.testing import (
    assert_k_grouped_fp8_gemm_close,
    assert_m_grouped_fp8_gemm_close,
    assert_untouched,
    k_grouped_device_ks,
    k_grouped_offsets,
    m_grouped_ends_layout,
    m_grouped_ids_layout,
    m_grouped_masked_layout,
    m_grouped_packed_layout,
    m_grouped_psum_layout,
)
from test_accuracy import emulated_gemm, make_inputs, quantize

BF16 = ml_dtypes.bfloat16


def test_ids_layout_pads_each_group_and_skips_whole_blocks():
    layout = m_grouped_ids_layout([(-1, 128), 0, 1, 127, (-1, 128), 129, (4, 128)])
    assert (layout.kind, layout.num_groups, layout.num_rows) == ("ids", 4, 896)
    assert layout.segments == [(1, 128, 129), (2, 256, 383), (3, 512, 641)]
    assert layout.zeroed == [(0, 128), (384, 512), (768, 896)] and layout.untouched == []
    kept = layout.padding_untouched()  # zero_padding_blocks=False
    assert kept.untouched == [(0, 128), (384, 512), (768, 896)] and kept.zeroed == [] and kept.values == layout.values
    ids = np.array(layout.values)
    assert (ids[:128] == -1).all() and ids[128] == 1 and (ids[129:256] == -1).all()
    assert (ids[256:383] == 2).all() and ids[383] == -1 and (ids[512:641] == 3).all() and (ids[641:768] == -1).all()
    assert (ids[768:] == 4).all() and layout.valid_rows == 1 + 127 + 129
    assert m_grouped_ids_layout([1, 65], alignment=64).values == [0] + [-1] * 63 + [1] * 65 + [-1] * 63
    with pytest.raises(ValueError, match="whole blocks"):
        m_grouped_ids_layout([(-1, 100)])
    with pytest.raises(ValueError, match="valid group"):
        m_grouped_ids_layout([3, (0, 128)])


def test_psum_packed_and_masked_layouts():
    psum = m_grouped_psum_layout([1, 0, 129, 3], trailing_rows=128)
    assert psum.values == [1, 128, 257, 387] and psum.num_rows == 640
    assert psum.segments == [(0, 0, 1), (2, 128, 257), (3, 384, 387)]
    assert psum.untouched == [(1, 128), (257, 384), (387, 640)]
    assert m_grouped_psum_layout([0, 0]).num_rows == 0
    packed = m_grouped_packed_layout([0, 1, 0, 200, 3, 0], trailing_rows=5)
    assert packed.values == [0, 1, 1, 201, 204, 204] and packed.num_rows == 209
    assert packed.segments == [(1, 0, 1), (3, 1, 201), (4, 201, 204)] and packed.untouched == [(204, 209)]
    masked = m_grouped_masked_layout([0, 5, 300, -2, 256], 256)
    assert masked.values == [0, 5, 300, -2, 256] and masked.num_rows == 1280
    assert masked.segments == [(1, 256, 261), (2, 512, 768), (4, 1024, 1280)]
    assert masked.untouched == [(0, 256), (261, 512), (768, 1024)]
    assert k_grouped_offsets([128, 0, 256, 128]) == [0, 128, 128, 384]


N, K = 192, 384


def grouped_inputs(layout, seed):
    """A [rows, K] per 1x128, B [G, N, K] per 128x128 (NumPy, E4M3 as ml_dtypes)."""
    a8, sfa, _, _ = make_inputs(layout.num_rows, 8, K, 128, seed)
    bs = [make_inputs(8, N, K, 128, seed + 1 + g)[2:] for g in range(layout.num_groups)]
    return a8, sfa, np.stack([b for b, _ in bs]), np.stack([s for _, s in bs])


def emulated_grouped(layout, a8, sfa, b8, sfb, group_of=lambda g: g):
    """D as the kernels compute it, NaN where nothing is written (the padding rows of the ids layout get A_pad B^T, its
    whole padding blocks zeros)."""
    d = np.full((layout.num_rows, N), np.nan, np.float32)
    for start, end in layout.zeroed:
        d[start:end] = 0.0
    for g, start, end in layout.segments:
        h = group_of(g)
        d[start:end] = emulated_gemm(a8[start:end], sfa[start:end], b8[h], sfb[h], 128)
    if layout.kind == "ids":  # the unspecified padding rows: written, as a 128-row tile would
        ids = np.array(layout.values)
        for g, start, end in layout.segments:
            pad_end = -(-end // 128) * 128
            assert (ids[end:pad_end] == -1).all()
            d[end:pad_end] = emulated_gemm(a8[end:pad_end], sfa[end:pad_end], b8[g], sfb[g], 128)
    return d


LAYOUTS = {
    "ids": m_grouped_ids_layout([(-1, 128), 0, 1, 127, (-1, 128), 129, (4, 128)]),
    "ids_padding_untouched": m_grouped_ids_layout([(-1, 128), 0, 1, 127, (-1, 128), 129, (4, 128)]).padding_untouched(),
    "psum": m_grouped_psum_layout([1, 0, 129, 3], trailing_rows=128),
    "packed": m_grouped_packed_layout([0, 1, 0, 200, 3, 0], trailing_rows=5),
    "masked": m_grouped_masked_layout([0, 5, 300, -2], 160),
}


@pytest.mark.parametrize("kind", list(LAYOUTS))
def test_emulated_m_grouped_gemm_passes(kind):
    layout = LAYOUTS[kind]
    a8, sfa, b8, sfb = grouped_inputs(layout, seed=11)
    d = emulated_grouped(layout, a8, sfa, b8, sfb).astype(BF16)
    if kind == "masked":  # [G, M_max, .] as the masked op takes them
        g = layout.num_groups
        assert assert_m_grouped_fp8_gemm_close(d.reshape(g, -1, N), a8.reshape(g, -1, K), sfa.reshape(g, -1, 3), b8,
                                               sfb, layout) < 1e-5
    else:
        assert assert_m_grouped_fp8_gemm_close(d, a8, sfa, b8, sfb, layout) < 1e-5


@pytest.mark.parametrize("kind", list(LAYOUTS))
def test_a_segment_computed_with_another_groups_b_fails(kind):
    layout = LAYOUTS[kind]
    a8, sfa, b8, sfb = grouped_inputs(layout, seed=12)
    g, start, end = layout.segments[-1]
    d = emulated_grouped(layout, a8, sfa, b8, sfb, group_of=lambda h: (h + 1) % layout.num_groups if h == g else h)
    with pytest.raises(AssertionError, match=rf"d rows {start}-{end - 1} \(group {g}\): "):
        assert_m_grouped_fp8_gemm_close(d.astype(BF16), a8, sfa, b8, sfb, layout)


@pytest.mark.parametrize("kind", [kind for kind, layout in LAYOUTS.items() if layout.untouched])
def test_a_written_untouched_row_fails(kind):
    layout = LAYOUTS[kind]
    a8, sfa, b8, sfb = grouped_inputs(layout, seed=13)
    d = emulated_grouped(layout, a8, sfa, b8, sfb)
    start, end = layout.untouched[-1]
    d[end - 1, 7] = 0.0
    with pytest.raises(AssertionError, match=rf"rows {start}-{end - 1} must be left untouched, but 1 of them were "
                                             rf"written, the first at row {end - 1}"):
        assert_m_grouped_fp8_gemm_close(d, a8, sfa, b8, sfb, layout)
    d[end - 1, 7] = np.nan
    _, first, _ = layout.segments[0]
    d[first, 3] = np.nan  # a computed row left unwritten
    with pytest.raises(AssertionError, match=r"1 of .* elements outside their bound"):
        assert_m_grouped_fp8_gemm_close(d, a8, sfa, b8, sfb, layout)


def test_a_padding_block_not_zeroed_fails():
    layout = LAYOUTS["ids"]
    a8, sfa, b8, sfb = grouped_inputs(layout, seed=14)
    d = emulated_grouped(layout, a8, sfa, b8, sfb)
    start, end = layout.zeroed[1]
    d[start + 5, 2] = np.nan  # left untouched where zeros were due
    message = rf"rows {start}-{end - 1} \(whole padding blocks\) must be zeros, but 1 of them are not, the first at "
    with pytest.raises(AssertionError, match=message + f"row {start + 5}"):
        assert_m_grouped_fp8_gemm_close(d, a8, sfa, b8, sfb, layout)


def test_assert_untouched_on_groups():
    d = np.full((3, 4, 5), np.nan, np.float32)
    assert_untouched(d, [(0, 12)])
    d[2, 1, 4] = 1.0
    assert_untouched(d, [(0, 9), (10, 12)])
    with pytest.raises(AssertionError, match="rows 8-11 must be left untouched, but 1 of them were written, the first "
                                             "at row 9"):
        assert_untouched(d, [(0, 8), (8, 12)], name="d")


M_K, N_K = 96, 64  # k-grouped M and N


def k_grouped_inputs(ks, seed):
    """Flat K-major buffers and MN-major scales [M, sum(ks) / 128] built as DeepGEMM's generator does: operands
    [sum_k, M] cast per 128 x 1 (per channel) group by group, each group's block transposed into the flat buffer."""
    rng = np.random.default_rng(seed)
    out = []
    for mn in (M_K, N_K):
        x = rng.standard_normal((sum(ks), mn)).astype(np.float32)
        flat, sf_rows = [], []
        for off, k in zip(k_grouped_offsets(ks), ks):
            if k:
                q, sf = quantize(x[off:off + k].T, 1)  # [mn, k] per 1x128 == [k, mn] per 128x1
                flat.append(q.reshape(-1))
                sf_rows.append(sf.T)
        out += [np.concatenate(flat), np.concatenate(sf_rows).T]  # sf: [mn, sum_k / 128], MN-major
    return out


def emulated_k_grouped(ks, a, sfa, b, sfb, c):
    d = c.copy()
    for g, (off, k) in enumerate(zip(k_grouped_offsets(ks), ks)):
        if k:
            blocks = slice(off // 128, (off + k) // 128)
            d[g] += emulated_gemm(a[off * M_K:(off + k) * M_K].reshape(M_K, k), sfa[:, blocks],
                                  b[off * N_K:(off + k) * N_K].reshape(N_K, k), sfb[:, blocks], 1)
    return d


KS = [256, 0, 128, 384]


def test_emulated_k_grouped_gemm_passes_and_an_empty_group_must_be_c():
    a, sfa, b, sfb = k_grouped_inputs(KS, seed=21)
    c = np.random.default_rng(22).standard_normal((len(KS), M_K, N_K)).astype(np.float32) * 32
    d = emulated_k_grouped(KS, a, sfa, b, sfb, c)
    assert assert_k_grouped_fp8_gemm_close(d, a, sfa, b, sfb, KS, c=c) < 1e-7
    assert assert_k_grouped_fp8_gemm_close(d, a, np.ascontiguousarray(sfa), b, sfb, KS, c=c, rows=slice(8, 40)) < 1e-7
    d0 = emulated_k_grouped(KS, a, sfa, b, sfb, np.zeros_like(c))
    assert_k_grouped_fp8_gemm_close(d0, a, sfa, b, sfb, KS)
    d[1, 5, 6] += 1e-3
    with pytest.raises(AssertionError, match=r"d\[1\] \(empty group: must be C\): 1 of"):
        assert_k_grouped_fp8_gemm_close(d, a, sfa, b, sfb, KS, c=c)


def test_k_group_read_from_the_wrong_offset_fails():
    a, sfa, b, sfb = k_grouped_inputs(KS, seed=23)
    c = np.zeros((len(KS), M_K, N_K), np.float32)
    d = emulated_k_grouped(KS, a, sfa, b, sfb, c)
    # Group 2 (k = 128 at K offset 256) read at offset 0, as a kernel that lost the previous groups' K would.
    d[2] = emulated_gemm(a[:128 * M_K].reshape(M_K, 128), sfa[:, :1], b[:128 * N_K].reshape(N_K, 128), sfb[:, :1], 1)
    with pytest.raises(AssertionError, match=r"d\[2\] \(k = 128\): "):
        assert_k_grouped_fp8_gemm_close(d, a, sfa, b, sfb, KS, c=c)


@pytest.mark.parametrize("kind", ["psum", "masked"])
def test_a_group_off_by_a_fraction_fails_its_calc_diff(kind):
    # One group's rows 1% off: within a bound as loose as 1.0 x the error scale element by element, but its own calc_diff
    # (~5e-5) is above the BF16 bar while the calc_diff over all rows might not be.
    layout = LAYOUTS[kind]
    a8, sfa, b8, sfb = grouped_inputs(layout, seed=14)
    d = emulated_grouped(layout, a8, sfa, b8, sfb)
    g, start, end = layout.segments[-1]
    d[start:end] *= 1.01
    args = (d, a8, sfa, b8, sfb, layout)
    if kind == "masked":
        groups = layout.num_groups
        args = (d.reshape(groups, -1, N), a8.reshape(groups, -1, K), sfa.reshape(groups, -1, 3), b8, sfb, layout)
    assert_m_grouped_fp8_gemm_close(*args, acc_tol=1.0)
    with pytest.raises(AssertionError, match=rf"calc_diff of 1 group\(s\) at or above 2e-05, worst group {g}: "):
        assert_m_grouped_fp8_gemm_close(*args, acc_tol=1.0, diff_tol=2e-5)


def test_a_k_group_off_by_a_fraction_fails_its_calc_diff():
    a, sfa, b, sfb = k_grouped_inputs(KS, seed=23)
    c = np.zeros((len(KS), M_K, N_K), np.float32)
    d = emulated_k_grouped(KS, a, sfa, b, sfb, c)
    d[3] *= 1.01
    assert_k_grouped_fp8_gemm_close(d, a, sfa, b, sfb, KS, c=c, acc_tol=1.0, diff_tol=None)
    with pytest.raises(AssertionError, match=r"calc_diff of 1 group\(s\) at or above 1e-05, worst group 3: "):
        assert_k_grouped_fp8_gemm_close(d, a, sfa, b, sfb, KS, c=c, acc_tol=1.0, diff_tol=1e-5)


def test_k_grouped_device_ks_clamps_like_the_kernel():
    # Rounded down to multiples of 128, at least 0, at most what the host's sum leaves after the groups before.
    assert k_grouped_device_ks([128, 256, 128, 384], 896) == [128, 256, 128, 384]
    assert k_grouped_device_ks([64, 1, 127, 100], 896) == [0, 0, 0, 0]
    assert k_grouped_device_ks([200, 300, 129, 100], 896) == [128, 256, 128, 0]
    assert k_grouped_device_ks([-128, 2**31 - 1, -2**31, 128], 896) == [0, 896, 0, 0]
    assert k_grouped_device_ks([384, 384, 384, 384], 896) == [384, 384, 128, 0]


def test_ends_layout_clamps_like_the_kernel():
    # Valid ends: the psum / packed layouts themselves.
    for sizes in ([1, 127, 0, 129, 300, 0, 64, 5], [0, 0, 3]):
        psum = m_grouped_psum_layout(sizes, trailing_rows=128)
        assert m_grouped_ends_layout(psum.values, psum.num_rows, "psum").segments == psum.segments
        packed = m_grouped_packed_layout(sizes, trailing_rows=5)
        assert m_grouped_ends_layout(packed.values, packed.num_rows, "packed").segments == packed.segments
    # Decreasing, negative, past M and the int32 extremes: groups start at the previous (clamped) end aligned and
    # clamped to M, end at max(start, min(end, M)).
    layout = m_grouped_ends_layout([300, 100, -5, 2**31 - 1, 700, -2**31, 640], 640, "psum")
    assert layout.segments == [(0, 0, 300), (3, 384, 640)]
    assert layout.untouched == [(300, 384)]
    layout = m_grouped_ends_layout([1, 0, 200, -7, 2**30, 5, -2**31], 523, "packed")
    assert layout.segments == [(0, 0, 1), (2, 1, 200), (4, 200, 523)]
    assert layout.untouched == []
