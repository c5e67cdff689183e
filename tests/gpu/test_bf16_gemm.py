"""BF16 GEMM (bf16_gemm_nt/nn/tn/tt) on the GPU against a float64 reference.

Every operand layout (A and B each K-major or MN-major: the four ops on contiguous inputs, and nt on strided views),
BF16 and FP32 outputs, C aliased and distinct, odd shapes (M 1, 7, 129, 4095; N and K 8, 24, 136, 7176), forced tiles
(CTA pairs, split-K, every tile height: the internal config hook), NaN-poisoned outputs with every element held to
its own bound, guard bands, bitwise reruns, CUDA-graph capture, zero sizes and bad inputs (clear errors, nothing
written). Alignment needs: a K-major operand's row stride and an MN-major operand's K stride multiples of 8 elements
(odd M or N in an MN-major operand: the rows of a wider buffer), K a multiple of 8, N a multiple of 8 (BF16 D).
Skips (with the reason) where torch or an SM90 GPU is missing.
"""
import itertools

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available() or torch.cuda.get_device_capability()[0] != 9:
    pytest.skip("needs an SM90 (Hopper) GPU", allow_module_level=True)

import hopgemm  # noqa: E402
from hopgemm.testing import calc_diff  # noqa: E402

M_LIST = (1, 7, 129, 4095)
NK_LIST = (8, 24, 136, 7176)
OPS = ("nt", "nn", "tn", "tt")


def _operand(rows, k, k_major, gen, scale=1.0):
    """A [rows, k] BF16 operand, K-major (contiguous rows) or MN-major (a [k, rows8] buffer's first `rows` columns,
    transposed: the K stride a multiple of 8 for any rows). Magnitudes vary per row so that a wrong row shows."""
    row_scale = torch.rand(rows, 1, device="cuda", generator=gen) * 4 + 0.25
    x = (torch.randn(rows, k, device="cuda", generator=gen) * row_scale * scale).to(torch.bfloat16)
    if k_major:
        return x
    rows8 = (rows + 7) // 8 * 8
    buf = torch.full((k, rows8), float("nan"), device="cuda", dtype=torch.bfloat16)
    buf[:, :rows] = x.T
    return buf[:, :rows].T


def _op_args(op, a, b):
    """The op's arguments for A [M, K], B [N, K]: nn takes B as [K, N], tn both transposed, tt A as [K, M]."""
    return {"nt": (a, b), "nn": (a, b.T), "tn": (a.T, b.T), "tt": (a.T, b)}[op]


def _call(op, a, b, d, c=None):
    getattr(hopgemm, f"bf16_gemm_{op}")(*_op_args(op, a, b), d, c=c)


def poisoned(m, n, dtype):
    return torch.full((m, n), float("nan"), device="cuda", dtype=dtype)


def check(d, a, b, c=None):
    """Every element of d written and within its own bound of the float64 reference: FP32 accumulation error
    (relative to sum |a||b|) plus the rounding of d's dtype (relative to |ref|; a BF16 C is added to the product
    rounded to BF16 first, as TMA's reduce-add does: relative to |A B^T| too); and calc_diff under 1e-5."""
    a64, b64 = a.double(), b.double()
    prod = a64 @ b64.T
    ref = prod + (c.double() if c is not None else 0)
    mag = a64.abs() @ b64.abs().T + (c.double().abs() if c is not None else 0)
    out_eps = 2.0**-8 if d.dtype == torch.bfloat16 else 2.0**-22
    bound = out_eps * (ref.abs() + (prod.abs() if c is not None else 0)) + 2.0**-16 * mag + 1e-30
    err = (d.double() - ref).abs()
    assert not d.isnan().any(), f"{int(d.isnan().sum())} elements of d were not written"
    bad = err > bound
    if bad.any():
        r, col = (int(x) for x in bad.nonzero()[0])
        raise AssertionError(f"{int(bad.sum())} elements out of bound, first at ({r}, {col}): {float(d[r, col])} vs "
                             f"{float(ref[r, col])} (bound {float(bound[r, col])})")
    assert calc_diff(d, ref) < 1e-5


def _gen(*seed):
    return torch.Generator(device="cuda").manual_seed(hash(seed) % (2**31))


def _inputs(m, n, k, a_k_major=True, b_k_major=True, seed=0):
    g = _gen(m, n, k, a_k_major, b_k_major, seed)
    return _operand(m, k, a_k_major, g), _operand(n, k, b_k_major, g)


# The op's natural layouts (contiguous inputs as the op takes them): nt K/K, nn K/MN, tn MN/MN, tt MN/K.
MAJORS = {"nt": (True, True), "nn": (True, False), "tn": (False, False), "tt": (False, True)}


@pytest.mark.parametrize("m,n,k", list(itertools.product(M_LIST, NK_LIST, NK_LIST)))
def test_nt_odd_shapes(m, n, k):
    a, b = _inputs(m, n, k)
    d = poisoned(m, n, torch.bfloat16)
    hopgemm.bf16_gemm_nt(a, b, d)
    check(d, a, b)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("m,n,k", [(1, 8, 8), (7, 136, 24), (129, 24, 7176), (4095, 7176, 136), (4095, 2112, 7168)])
@pytest.mark.parametrize("out", [torch.bfloat16, torch.float32])
def test_every_layout_and_output(op, m, n, k, out):
    a, b = _inputs(m, n, k, *MAJORS[op], seed=1)
    d = poisoned(m, n, out)
    _call(op, a, b, d)
    check(d, a, b)


@pytest.mark.parametrize("a_k_major,b_k_major", list(itertools.product((True, False), repeat=2)))
@pytest.mark.parametrize("m,n,k", [(129, 136, 7176), (4095, 24, 136)])
def test_nt_takes_either_major(a_k_major, b_k_major, m, n, k):
    # nt with strided views: the kernel reads whichever major each operand has (no copy, no transpose).
    a, b = _inputs(m, n, k, a_k_major, b_k_major, seed=2)
    d = poisoned(m, n, torch.bfloat16)
    hopgemm.bf16_gemm_nt(a, b, d)
    check(d, a, b)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("out", [torch.bfloat16, torch.float32])
@pytest.mark.parametrize("c_mode", ["aliased", "distinct"])
@pytest.mark.parametrize("m,n,k", [(7, 24, 136), (4095, 7176, 1536)])
def test_accumulate(op, out, c_mode, m, n, k):
    a, b = _inputs(m, n, k, *MAJORS[op], seed=3)
    c = (torch.randn(m, n, device="cuda") * 32).to(out)
    if c_mode == "aliased":
        d = c.clone()
        _call(op, a, b, d, c=d)
    else:
        d = poisoned(m, n, out)
        c_before = c.clone()
        _call(op, a, b, d, c=c)
        assert torch.equal(c, c_before), "c must not be modified"
    check(d, a, b, c)


# Tiles forced through the internal config hook: every tile height, both CTA pairs (their multicast halves in each
# operand major), split-K (fused reduction), D staged in the last stage, phantom tiles (M, N not multiples of the tile).
FORCED = {
    "64x256": dict(block_m=64, block_n=256),
    "128x256": dict(block_m=128, block_n=256),
    "256x128": dict(block_m=256, block_n=128),
    "128x128-pair-b": dict(block_m=128, block_n=128, cluster_m=2),
    "128x128-pair-a": dict(block_m=128, block_n=128, cluster_n=2),
    "256x128-pair-b": dict(block_m=256, block_n=128, cluster_m=2),
    "256x64-pair-a": dict(block_m=256, block_n=64, cluster_n=2),
    # 76 rows of B per CTA are not whole 8-row swizzle atoms: the first CTA loads and multicasts the whole K-major B
    # tile. An MN-major B keeps its 64-row boxes, whose pair halves must be whole: refused there.
    "128x152-pair-b-whole": dict(block_m=128, block_n=152, cluster_m=2),
    "128x64-split3": dict(block_m=128, block_n=64, k_splits=3),
    "64x128-split8": dict(block_m=64, block_n=128, k_splits=8),
    "128x64-d-in-stage": dict(block_m=128, block_n=64, d_in_stage=1),
}


@pytest.mark.parametrize("name", list(FORCED))
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("out,accumulate", [(torch.bfloat16, False), (torch.float32, True)])
def test_forced_tiles(name, op, out, accumulate):
    m, n, k = 777, 1000, 3000 + 8
    a, b = _inputs(m, n, k, *MAJORS[op], seed=4)
    c = (torch.randn(m, n, device="cuda") * 8).to(out) if accumulate else None
    d = c.clone() if accumulate else poisoned(m, n, out)
    overrides = {"k_splits": 1, "d_in_stage": 0, "d_passes": 1, **FORCED[name]}  # the pick may split K
    if out == torch.float32 and overrides.get("d_in_stage"):
        overrides["d_passes"] = 2  # one 128-byte swizzle atom per pass
    if name == "128x152-pair-b-whole" and not MAJORS[op][1]:
        with pytest.raises(ValueError, match="MN-major operand's tile rows"):
            hopgemm._C._bf16_gemm_with_config(*_op_args(op, a, b), d, d if accumulate else None, op, overrides)
        return
    hopgemm._C._bf16_gemm_with_config(*_op_args(op, a, b), d, d if accumulate else None, op, overrides)
    check(d, a, b, c)


def test_guard_bands_untouched_and_strided_output():
    m, n, k = 129, 136, 520
    a, b = _inputs(m, n, k, seed=5)
    buf = poisoned(m + 16, n + 64, torch.bfloat16)
    d = buf[8 : 8 + m, 32 : 32 + n]
    hopgemm.bf16_gemm_nt(a, b, d)
    check(d, a, b)
    band = buf.clone()
    band[8 : 8 + m, 32 : 32 + n] = float("nan")
    assert band.isnan().all(), "memory around d was written"


@pytest.mark.parametrize("op", OPS)
def test_bitwise_identical_reruns(op):
    m, n, k = 4095, 7176, 2056
    a, b = _inputs(m, n, k, *MAJORS[op], seed=6)
    first = poisoned(m, n, torch.bfloat16)
    _call(op, a, b, first)
    for _ in range(3):
        again = poisoned(m, n, torch.bfloat16)
        _call(op, a, b, again)
        assert torch.equal(first, again)


def test_cuda_graph_capture_and_replay():
    m, n, k = 128, 7168, 2048
    a, b = _inputs(m, n, k, seed=7)
    d = poisoned(m, n, torch.bfloat16)
    hopgemm.bf16_gemm_nt(a, b, d)  # warm-up: compiles and loads outside the capture
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        hopgemm.bf16_gemm_nt(a, b, d)
    a2, b2 = _inputs(m, n, k, seed=8)
    a.copy_(a2), b.copy_(b2)
    d.fill_(float("nan"))
    graph.replay()
    torch.cuda.synchronize()
    check(d, a2, b2)


def test_zero_sizes():
    for m, n in [(0, 256), (64, 0)]:
        a, b = _inputs(max(m, 1), max(n, 8), 256, seed=9)
        buf = torch.full((72, 264), float("nan"), device="cuda", dtype=torch.bfloat16)
        c = torch.randn(72, 264, device="cuda", dtype=torch.bfloat16)
        hopgemm.bf16_gemm_nt(a[:m], b[:n], buf[4 : 4 + m, 8 : 8 + n], c=c[4 : 4 + m, 8 : 8 + n])
        torch.cuda.synchronize()
        assert buf.isnan().all(), f"M = {m}, N = {n}: memory around the empty d was written"
    a = torch.empty(64, 0, device="cuda", dtype=torch.bfloat16)
    b = torch.empty(256, 0, device="cuda", dtype=torch.bfloat16)
    d = torch.full((64, 256), float("nan"), device="cuda")
    c = torch.randn(64, 256, device="cuda")
    hopgemm.bf16_gemm_nt(a, b, d, c=c)
    assert torch.equal(d, c), "K == 0 must give D = C"
    d16 = torch.full((64, 256), float("nan"), device="cuda", dtype=torch.bfloat16)
    hopgemm.bf16_gemm_nt(a, b, d16)
    assert (d16 == 0).all(), "K == 0 without C must give zeros"


def test_bad_inputs_raise_and_write_nothing():
    m, n, k = 128, 256, 512
    a, b = _inputs(m, n, k, seed=10)
    d = poisoned(m, n, torch.bfloat16)
    c = torch.randn(m, n, device="cuda", dtype=torch.bfloat16)
    misaligned = torch.empty(m * k + 16, device="cuda", dtype=torch.bfloat16)[4 : 4 + m * k].view(m, k)
    odd_k = torch.randn(m, k + 4, device="cuda", dtype=torch.bfloat16)
    tall = poisoned(m + 1, n, torch.bfloat16)
    cases = [
        ("a", lambda: hopgemm.bf16_gemm_nt(a.float(), b, d, c=c)),  # dtype
        ("b", lambda: hopgemm.bf16_gemm_nt(a, b[:, :256], d, c=c)),  # shape
        ("a", lambda: hopgemm.bf16_gemm_nt(a[:, ::2], b[:, ::2], d, c=c)),  # no unit stride
        ("a", lambda: hopgemm.bf16_gemm_nt(misaligned, b, d, c=c)),  # alignment
        ("a", lambda: hopgemm.bf16_gemm_nt(odd_k[:, 2 : 2 + k], b, d, c=c)),  # misaligned base
        ("d", lambda: hopgemm.bf16_gemm_nt(a, b, d.T, c=c)),  # D not row-major
        ("c", lambda: hopgemm.bf16_gemm_nt(a, b, d, c=c.cpu())),  # host memory
        ("c", lambda: hopgemm.bf16_gemm_nt(a, b, d, c=c.float())),  # dtype
        ("c", lambda: hopgemm.bf16_gemm_nt(a, b, tall[:m], c=tall[1:])),  # overlaps d
    ]
    for arg, call in cases:
        with pytest.raises((ValueError, NotImplementedError, TypeError)) as info:
            call()
        assert f"'{arg}'" in str(info.value), (arg, str(info.value))
    torch.cuda.synchronize()
    assert d.isnan().all() and tall.isnan().all(), "a rejected call wrote to d"


def test_torch_ops_opcheck_and_compile():
    m, n, k = 129, 136, 520
    a, b = _inputs(m, n, k, seed=11)
    d = poisoned(m, n, torch.bfloat16)
    torch.library.opcheck(torch.ops.hopgemm.bf16_gemm_nt.default, (a, b, d))

    @torch.compile(fullgraph=True)
    def f(a, b, d):
        hopgemm.bf16_gemm_nt(a, b, d)
        return d

    d.fill_(float("nan"))
    check(f(a, b, d), a, b)
