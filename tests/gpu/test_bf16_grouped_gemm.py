"""BF16 M-grouped GEMMs (m_grouped_bf16_gemm_nt/nn_contiguous, m_grouped_bf16_gemm_nt_masked and its alias
bf16_m_grouped_gemm_nt_masked) on the GPU against a float64 reference, group by group: every computed row within its
bound, every row the op must leave alone still NaN (hopgemm.testing's layouts: group ids with skipped blocks, psum,
packed, masked), B K-major and MN-major in both contiguous forms (deep_gemm's nn [G, K, N]), odd group sizes, CUDA-graph replay with a changed masked_m, bad inputs. Skips (with the reason) where
torch or an SM90 GPU is missing."""
import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available() or torch.cuda.get_device_capability()[0] != 9:
    pytest.skip("needs an SM90 (Hopper) GPU", allow_module_level=True)

import hopgemm  # noqa: E402
from hopgemm.testing import (  # noqa: E402
    assert_untouched,
    calc_diff,
    m_grouped_ids_layout,
    m_grouped_masked_layout,
    m_grouped_packed_layout,
    m_grouped_psum_layout,
)


def _randn(*shape, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    return torch.randn(*shape, device="cuda", generator=g).to(torch.bfloat16)


def _expect_rejected(cases, d):
    """Each (argument, call) raises an error naming the argument, and d (NaN-poisoned) stays untouched."""
    for arg, call in cases:
        with pytest.raises((ValueError, NotImplementedError, TypeError)) as info:
            call()
        assert f"'{arg}'" in str(info.value), (arg, str(info.value))
    torch.cuda.synchronize()
    assert d.isnan().all(), "a rejected call wrote to d"


def _check(d, a, b, layout):
    """Each segment's rows within the element-wise bound of the float64 reference (FP32 accumulation, BF16 rounding),
    the untouched rows still NaN; calc_diff over the computed rows under 1e-5."""
    d2, a2 = d.reshape(-1, d.shape[-1]), a.reshape(-1, a.shape[-1])
    num, den = 0.0, 0.0
    for group, start, end in layout.segments:
        ref = a2[start:end].double() @ b[group].double().T
        mag = a2[start:end].double().abs() @ b[group].double().abs().T
        got = d2[start:end].double()
        assert not got.isnan().any(), f"group {group}: rows {start}-{end - 1} not all written"
        bad = (got - ref).abs() > 2.0**-8 * ref.abs() + 2.0**-16 * mag + 1e-30
        assert not bad.any(), f"group {group}: {int(bad.sum())} elements out of bound"
        num += float((got * ref).sum())
        den += float((got * got + ref * ref).sum())
    assert_untouched(d2, layout.untouched)
    assert den == 0 or 1 - 2 * num / den < 1e-5


def _contiguous_layout(kind):
    sizes = [129, 1, 0, 300, 64]
    if kind == "ids":
        return m_grouped_ids_layout([sizes[0], (-1, 128), *sizes[1:]])
    if kind == "psum":
        return m_grouped_psum_layout(sizes, trailing_rows=40)
    return m_grouped_packed_layout(sizes, trailing_rows=8)


def _run_contiguous(op, a, b_arg, d, layout, kind):
    extra = {"use_psum_layout": True} if kind == "psum" else {"use_packed_layout": True} if kind == "packed" else {}
    getattr(hopgemm, f"m_grouped_bf16_gemm_{op}_contiguous")(a, b_arg, d, layout.tensor(), **extra)


def _b_as_passed(b, op, b_major):
    """B [G, N, K] as the op takes it in b_major storage: nt a [G, N, K] K-major or MN-major (N contiguous, strides
    (N K, 1, N)); nn a [G, K, N], contiguous where MN-major (deep_gemm's test: b.mT), else the transposed view of the
    K-major [G, N, K]."""
    stored = b.contiguous() if b_major == "k" else b.transpose(1, 2).contiguous().transpose(1, 2)
    return stored if op == "nt" else stored.transpose(1, 2)


@pytest.mark.parametrize("n,k", [(4096, 7168), (136, 520), (7176, 2056)])
@pytest.mark.parametrize("kind", ["ids", "psum", "packed"])
@pytest.mark.parametrize("op,b_major", [("nt", "k"), ("nt", "mn"), ("nn", "k"), ("nn", "mn")])
def test_contiguous(n, k, kind, op, b_major):
    layout = _contiguous_layout(kind)
    a = _randn(layout.num_rows, k, seed=n + k)
    b = _randn(layout.num_groups, n, k, seed=n * k)
    d = torch.full((layout.num_rows, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    b_arg = _b_as_passed(b, op, b_major)
    if op == "nn" and b_major == "mn":
        assert b_arg[0].is_contiguous()  # deep_gemm's [G, K, N]
    _run_contiguous(op, a, b_arg, d, layout, kind)
    _check(d, a, b, layout)


@pytest.mark.parametrize("kind", ["ids", "psum"])
@pytest.mark.parametrize("padding", ["groups", "k_rows"])
def test_contiguous_mn_major_b_strided(kind, padding):
    # An MN-major B read in place at other strides: its groups further apart than N x K (a slice of a [G, K + 64, N]
    # buffer), or its K rows further apart than N (a slice of a [G, K, N + 24] buffer).
    n, k = 392, 1032
    layout = _contiguous_layout(kind)
    a = _randn(layout.num_rows, k, seed=11)
    if padding == "groups":
        buffer = _randn(layout.num_groups, k + 64, n, seed=12)
        b_kn = buffer[:, :k, :]
    else:
        buffer = _randn(layout.num_groups, k, n + 24, seed=13)
        b_kn = buffer[:, :, :n]
    d = torch.full((layout.num_rows, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    _run_contiguous("nn", a, b_kn, d, layout, kind)
    _check(d, a, b_kn.transpose(1, 2), layout)
    d.fill_(float("nan"))
    _run_contiguous("nt", a, b_kn.transpose(1, 2), d, layout, kind)
    _check(d, a, b_kn.transpose(1, 2), layout)


def test_contiguous_mn_major_b_matches_k_major():
    # The same B in either major gives the same D (the same sums over K; only the loads differ, and the tiles may).
    layout = m_grouped_psum_layout([256, 300, 128], alignment=128)
    n, k = 1024, 2048
    a, b = _randn(layout.num_rows, k, seed=14), _randn(3, n, k, seed=15)
    d_k, d_mn = (torch.full((layout.num_rows, n), float("nan"), device="cuda", dtype=torch.bfloat16) for _ in range(2))
    _run_contiguous("nt", a, _b_as_passed(b, "nt", "k"), d_k, layout, "psum")
    _run_contiguous("nt", a, _b_as_passed(b, "nt", "mn"), d_mn, layout, "psum")
    _check(d_mn, a, b, layout)
    for _, start, end in layout.segments:
        assert calc_diff(d_k[start:end], d_mn[start:end]) < 1e-6


@pytest.mark.parametrize("n,k", [(4096, 7168), (7168, 2048), (136, 520)])
@pytest.mark.parametrize("masked", [[20, 0, 7, 192], [1, 300, 4096, 5]])
def test_masked(n, k, masked):
    groups, m_max = len(masked), 320
    a = _randn(groups, m_max, k, seed=k)
    b = _randn(groups, n, k, seed=n)
    d = torch.full((groups, m_max, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    masked_m = torch.tensor(masked, dtype=torch.int32, device="cuda")
    hopgemm.m_grouped_bf16_gemm_nt_masked(a, b, d, masked_m, expected_m=max(1, sum(masked) // groups))
    _check(d, a, b, m_grouped_masked_layout(masked, m_max))


def test_masked_alias_and_graph_replay():
    assert hopgemm.bf16_m_grouped_gemm_nt_masked is hopgemm.m_grouped_bf16_gemm_nt_masked
    groups, m_max, n, k = 4, 256, 2048, 1024
    a, b = _randn(groups, m_max, k, seed=1), _randn(groups, n, k, seed=2)
    d = torch.full((groups, m_max, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    masked_m = torch.tensor([5, 0, 256, 77], dtype=torch.int32, device="cuda")
    hopgemm.bf16_m_grouped_gemm_nt_masked(a, b, d, masked_m, 64)  # warm-up outside the capture
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        hopgemm.bf16_m_grouped_gemm_nt_masked(a, b, d, masked_m, 64)
    masked_m.copy_(torch.tensor([200, 3, 0, 256], dtype=torch.int32))
    d.fill_(float("nan"))
    graph.replay()
    torch.cuda.synchronize()
    _check(d, a, b, m_grouped_masked_layout([200, 3, 0, 256], m_max))


def test_matches_dense_per_group():
    # Each group's rows equal the dense BF16 GEMM of those rows bitwise where the tiles line up (aligned groups).
    layout = m_grouped_psum_layout([256, 128], alignment=128)
    n, k = 1024, 2048
    a, b = _randn(layout.num_rows, k, seed=3), _randn(2, n, k, seed=4)
    d = torch.full((layout.num_rows, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    hopgemm.m_grouped_bf16_gemm_nt_contiguous(a, b, d, layout.tensor(), use_psum_layout=True)
    for group, start, end in layout.segments:
        dense = torch.empty(end - start, n, device="cuda", dtype=torch.bfloat16)
        hopgemm.bf16_gemm_nt(a[start:end], b[group], dense)
        assert calc_diff(d[start:end], dense) < 1e-6


def test_bad_inputs_raise_and_write_nothing():
    a, b = _randn(256, 512, seed=5), _randn(2, 256, 512, seed=6)
    d = torch.full((256, 256), float("nan"), device="cuda", dtype=torch.bfloat16)
    ids = torch.zeros(256, dtype=torch.int32, device="cuda")
    cases = [
        ("a", lambda: hopgemm.m_grouped_bf16_gemm_nt_contiguous(a.float(), b, d, ids)),
        ("a", lambda: hopgemm.m_grouped_bf16_gemm_nt_contiguous(a, b[:, :, :256], d, ids)),  # K is b's: a differs
        ("b", lambda: hopgemm.m_grouped_bf16_gemm_nt_contiguous(
            a, torch.empty(2, 256, 1024, device="cuda", dtype=torch.bfloat16)[:, :, ::2], d, ids)),  # no unit stride
        ("b", lambda: hopgemm.m_grouped_bf16_gemm_nt_contiguous(
            a, torch.empty(2, 512, 260, device="cuda", dtype=torch.bfloat16)[:, :, :256].transpose(1, 2), d,
            ids)),  # MN-major with a K stride of 520 bytes (TMA: multiples of 16)
        ("b", lambda: hopgemm.m_grouped_bf16_gemm_nt_masked(
            a.view(2, 128, 512), b.transpose(1, 2).contiguous().transpose(1, 2), d.view(2, 128, 256),
            ids[:2], 64)),  # masked: K-major B only, as deep_gemm's
        ("grouped_layout", lambda: hopgemm.m_grouped_bf16_gemm_nt_contiguous(a, b, d, ids[:10])),
        ("d", lambda: hopgemm.m_grouped_bf16_gemm_nt_contiguous(a, b, d.float(), ids)),
        ("masked_m", lambda: hopgemm.m_grouped_bf16_gemm_nt_masked(a.view(2, 128, 512), b, d.view(2, 128, 256),
                                                                   ids[:3], 64)),
    ]
    _expect_rejected(cases, d)


@pytest.mark.parametrize("m,n", [(4096, 7168), (136, 520), (7168, 2048)])
@pytest.mark.parametrize("c_mode", ["none", "aliased", "distinct"])
def test_k_grouped_tn(m, n, c_mode):
    ks = [512, 0, 64, 1536, 192]
    sum_k, groups = sum(ks), len(ks)
    a, b = _randn(sum_k, m, seed=m), _randn(sum_k, n, seed=n)
    ks_tensor = torch.tensor(ks, dtype=torch.int32, device="cuda")
    c = torch.randn(groups, m, n, device="cuda") * 8
    if c_mode == "aliased":
        d = c.clone()
        hopgemm.k_grouped_bf16_gemm_tn_contiguous(a, b, d, ks, ks_tensor, d)
    elif c_mode == "distinct":
        d = torch.full((groups, m, n), float("nan"), device="cuda")
        hopgemm.k_grouped_bf16_gemm_tn_contiguous(a, b, d, ks, ks_tensor, c)
    else:
        d = torch.full((groups, m, n), float("nan"), device="cuda")
        hopgemm.k_grouped_bf16_gemm_tn_contiguous(a, b, d, ks, ks_tensor)
    off = 0
    for g, k in enumerate(ks):
        ag, bg = a[off:off + k].double(), b[off:off + k].double()
        ref = ag.T @ bg + (c[g].double() if c_mode != "none" else 0)
        mag = ag.abs().T @ bg.abs() + (c[g].double().abs() if c_mode != "none" else 0)
        err = (d[g].double() - ref).abs()
        assert not d[g].isnan().any(), f"group {g} not all written"
        assert (err <= 2.0**-16 * mag + 2.0**-22 * ref.abs() + 1e-30).all(), f"group {g}: max err {float(err.max())}"
        off += k


def test_k_grouped_bad_inputs():
    a, b = _randn(128, 256, seed=7), _randn(128, 64, seed=8)
    d = torch.full((2, 256, 64), float("nan"), device="cuda")
    ks_tensor = torch.tensor([64, 64], dtype=torch.int32, device="cuda")
    cases = [
        ("ks", lambda: hopgemm.k_grouped_bf16_gemm_tn_contiguous(a, b, d, [96, 32], ks_tensor)),  # not multiples of 64
        ("ks", lambda: hopgemm.k_grouped_bf16_gemm_tn_contiguous(a, b, d, [64], ks_tensor)),  # one K per group
        ("a", lambda: hopgemm.k_grouped_bf16_gemm_tn_contiguous(a[:, :200], b, d, [64, 64], ks_tensor)),  # shape
        ("a", lambda: hopgemm.k_grouped_bf16_gemm_tn_contiguous(a.T.contiguous().T, b, d, [64, 64], ks_tensor)),
        ("d", lambda: hopgemm.k_grouped_bf16_gemm_tn_contiguous(a, b, d.bfloat16(), [64, 64], ks_tensor)),
    ]
    _expect_rejected(cases, d)
