"""The public paths around the FP8 GEMM on the GPU: precompile followed by the error_on_miss policy running every op,
stream= and two streams at once, PDL between real kernels, set_tc_util, recipe_a / recipe_b, compiled_dims and
disable_ue8m0_cast, device_info's values, and hopgemm.testing's bench and bench_kineto (1D1D through every layout alias
is test_fp8_gemm.py's). Skips (with the reason) where torch or an SM90 GPU is missing."""
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available() or torch.cuda.get_device_capability()[0] != 9:
    pytest.skip("needs an SM90 (Hopper) GPU", allow_module_level=True)

import hopgemm  # noqa: E402
from hopgemm import _C  # noqa: E402
from hopgemm.testing import bench, bench_kineto  # noqa: E402
from fp8_gemm_inputs import check, make_inputs, poisoned  # noqa: E402

# A fresh process with a fresh cache directory (argv[1]): nothing compiled or loaded before precompile. The GEMMs are
# DeepSeek-V3's (src/api/suites.cpp, the deepseek-v3 suite): forward and dgrad 1D2D into BF16, wgrad 1D1D FP32 D += A B^T.
PRECOMPILED_PROCESS = r'''
import sys
import torch
import hopgemm

NK = [(2112, 7168), (576, 7168), (24576, 1536), (32768, 512), (7168, 16384), (4096, 7168), (7168, 2048)]
GEMMS = ([("fwd", m, n, k) for m in (1, 64, 128, 4096) for n, k in NK] + [("dgrad", 4096, k, n) for n, k in NK] +
         [("wgrad", n, k, 4096) for n, k in NK] + [("fwd", 8192, 8192, 8192)])

hopgemm.set_cache_dir(sys.argv[1])
report = hopgemm.precompile("deepseek-v3", num_sms=hopgemm.get_num_sms())
assert not report.errors and report.num_compiled == report.num_kernels > 0, (report, report.errors)
hopgemm.set_jit_policy("error_on_miss")
calls = 0

for dtype in (torch.bfloat16, torch.float32):
    x = torch.randn(256, 512, device="cuda", dtype=dtype)
    for ue8m0 in (False, True):
        for cast in (hopgemm.per_token_cast_to_fp8, hopgemm.per_block_cast_to_fp8, hopgemm.per_channel_cast_to_fp8):
            cast(x, use_ue8m0=ue8m0)
            calls += 1
sf = torch.rand(300, 40, device="cuda")
hopgemm.get_mn_major_tma_aligned_tensor(sf)
hopgemm.get_mn_major_tma_aligned_packed_ue8m0_tensor(sf)
hopgemm.get_mn_major_tma_aligned_packed_ue8m0_tensor(sf.view(3, 100, 40))
ks = [512, 1024]
hopgemm.get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor(torch.rand(12, 256, device="cuda"),
                                                               torch.tensor(ks, device="cuda"), ks, 128, 128)
calls += 4

def layouts(sf):
    return (sf, hopgemm.get_mn_major_tma_aligned_tensor(sf))

for role, m, n, k in GEMMS:
    sf_k = (k + 127) // 128
    a = torch.zeros(m, k, device="cuda", dtype=torch.float8_e4m3fn)
    b = torch.zeros(n, k, device="cuda", dtype=torch.float8_e4m3fn)
    sfa = torch.ones(m, sf_k, device="cuda")
    if role == "wgrad":
        d = torch.zeros(m, n, device="cuda")
        for sfa_arg in layouts(sfa):
            for sfb_arg in layouts(torch.ones(n, sf_k, device="cuda")):
                hopgemm.fp8_gemm_nt((a, sfa_arg), (b, sfb_arg), d, c=d, recipe=(1, 1, 128))
                calls += 1
        continue
    d = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    sfb = torch.ones((n + 127) // 128, sf_k, device="cuda")
    for sfa_arg in layouts(sfa):
        for name, a_arg, b_arg in [("nt", (a, sfa_arg), (b, sfb)), ("nn", (a, sfa_arg), (b.T, sfb.T)),
                                   ("tn", (a.T, sfa_arg.T), (b.T, sfb.T)), ("tt", (a.T, sfa_arg.T), (b, sfb))]:
            getattr(hopgemm, "fp8_gemm_" + name)(a_arg, b_arg, d)
            calls += 1
torch.cuda.synchronize()

# What precompile did not build is refused: another quantisation granularity, and a 1D2D GEMM into FP32.
for refused in (lambda: hopgemm.per_token_cast_to_fp8(torch.randn(64, 256, device="cuda"), gran_k=64),
                lambda: hopgemm.fp8_gemm_nt((a, sfa), (b, sfb), torch.empty(m, n, device="cuda"))):
    try:
        refused()
        raise AssertionError("a kernel outside the precompiled set ran under error_on_miss")
    except RuntimeError as e:
        assert "error_on_miss" in str(e), e
print(f"{calls} calls ran on precompiled kernels")
'''


def test_precompile_then_error_on_miss_runs_every_op(tmp_path):
    result = subprocess.run([sys.executable, "-c", PRECOMPILED_PROCESS, str(tmp_path / "cache")], capture_output=True,
                            text=True, timeout=600, cwd="/tmp")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "calls ran on precompiled kernels" in result.stdout


@pytest.fixture
def side_stream():
    """Runs the test on a non-default stream: checks made on it never wait for other streams' work."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        yield stream
    torch.cuda.synchronize()


def test_stream_argument_runs_the_gemm_on_that_stream(side_stream):
    # The stream passed is held behind a gate (an event after ~50 ms of GPU sleep on a third stream): the output is
    # still unwritten when the test's own stream has finished, and right once the gate opens.
    m, n, k = 512, 2048, 4096
    a8, sfa, b8, sfb = make_inputs(m, n, k, False, seed=71)
    hopgemm.fp8_gemm_nt((a8, sfa), (b8, sfb), poisoned(m, n, torch.bfloat16))  # compiled and loaded before the gate
    for stream_arg in ("stream", "handle"):
        d = poisoned(m, n, torch.bfloat16)
        gated = torch.cuda.Stream()
        gated.wait_stream(side_stream)
        blocker = torch.cuda.Stream()
        with torch.cuda.stream(blocker):
            torch.cuda._sleep(100_000_000)
        gated.wait_event(blocker.record_event())
        hopgemm.fp8_gemm_nt((a8, sfa), (b8, sfb), d, stream=gated if stream_arg == "stream" else gated.cuda_stream)
        side_stream.synchronize()
        assert d.isnan().all(), "the GEMM ran before its stream's gate opened: not on the stream passed"
        gated.synchronize()
        side_stream.wait_stream(gated)
        check(d, a8, sfa, b8, sfb, False)


@pytest.mark.parametrize("overrides", [{}, dict(block_m=64, block_n=64, k_splits=4, cluster_m=1, cluster_n=1)])
def test_two_streams_at_once(side_stream, overrides):
    # The same kernel on two streams concurrently, each with its own inputs and output; split-K's partials and tile
    # counters are per stream (calls on different streams never share scratch: src/runtime/workspace.hpp).
    m, n, k = 64, 2112, 7168
    inputs = [make_inputs(m, n, k, False, seed=73 + i) for i in range(2)]
    streams = [torch.cuda.Stream() for _ in range(2)]
    outs = [[poisoned(m, n, torch.bfloat16) for _ in range(8)] for _ in range(2)]
    for s in streams:
        s.wait_stream(side_stream)
    for rep in range(8):
        for (a8, sfa, b8, sfb), s, d in zip(inputs, streams, outs):
            _C._fp8_gemm_nt_with_config((a8, sfa), (b8, sfb), d[rep], overrides=overrides, stream=s)
    for s in streams:
        side_stream.wait_stream(s)
    for (a8, sfa, b8, sfb), d in zip(inputs, outs):
        check(d[0], a8, sfa, b8, sfb, False)
        assert all(torch.equal(d[0], other) for other in d[1:])


def test_pdl_between_quantisation_and_gemm():
    # With PDL every hopgemm kernel may start before the previous one on its stream ends: each must wait before
    # touching memory the previous one uses. The quantiser rewrites A (and its scales) that the previous GEMM reads, and
    # the GEMM reads what the quantiser just wrote, four times over.
    m, n, k = 2048, 7168, 7168
    _, _, w8, sfw = make_inputs(1, n, k, False, seed=79)
    xs = [torch.randn(m, k, device="cuda", dtype=torch.bfloat16) * (i + 1) for i in range(4)]
    a8 = torch.empty(m, k, device="cuda", dtype=torch.float8_e4m3fn)
    sfa = torch.empty(m, k // 128, device="cuda")
    outs = [poisoned(m, n, torch.bfloat16) for _ in xs]
    _C.per_token_cast_to_fp8(xs[0], a8, sfa)  # both kernels loaded first: the chain runs back to back
    hopgemm.fp8_gemm_nt((a8, sfa), (w8, sfw), outs[0])
    hopgemm.set_pdl(True)
    try:
        for x, d in zip(xs, outs):
            _C.per_token_cast_to_fp8(x, a8, sfa)
            hopgemm.fp8_gemm_nt((a8, sfa), (w8, sfw), d)
        torch.cuda.synchronize()
    finally:
        hopgemm.set_pdl(False)
    for x, d in zip(xs, outs):
        x8, sfx = hopgemm.per_token_cast_to_fp8(x)
        check(d, x8, sfx, w8, sfw, False)


def test_tc_util_keeps_the_result_correct():
    m, n, k = 1024, 4096, 7168
    a8, sfa, b8, sfb = make_inputs(m, n, k, False, seed=83)
    try:
        for percent in (100, 40):
            hopgemm.set_tc_util(percent)
            d = poisoned(m, n, torch.bfloat16)
            hopgemm.fp8_gemm_nt((a8, sfa), (b8, sfb), d)
            check(d, a8, sfa, b8, sfb, False)
    finally:
        hopgemm.set_tc_util(100)


@pytest.mark.parametrize("recipe_1d1d", [False, True])
def test_operand_recipes_and_compatibility_arguments_give_the_same_bits(recipe_1d1d):
    m, n, k = 257, 2112, 7168
    a8, sfa, b8, sfb = make_inputs(m, n, k, recipe_1d1d, seed=89)
    out_dtype = torch.float32 if recipe_1d1d else torch.bfloat16
    gran_b = 1 if recipe_1d1d else 128
    plain = poisoned(m, n, out_dtype)
    hopgemm.fp8_gemm_nt((a8, sfa), (b8, sfb), plain, recipe=(1, gran_b, 128))
    check(plain, a8, sfa, b8, sfb, recipe_1d1d)
    for kwargs in (dict(recipe_a=(1, 128), recipe_b=(gran_b, 128)), dict(compiled_dims="mn"),
                   dict(disable_ue8m0_cast=True)):
        d = poisoned(m, n, out_dtype)
        hopgemm.fp8_gemm_nt((a8, sfa), (b8, sfb), d, **kwargs)
        assert torch.equal(d, plain), kwargs


def test_device_info_matches_torch():
    device = torch.cuda.current_device()
    props = torch.cuda.get_device_properties(device)
    info = hopgemm.device_info()
    assert info.device == device and hopgemm.device_info(device).name == info.name == props.name
    assert (info.arch_major, info.arch_minor) == (props.major, props.minor) == (9, 0)
    assert info.num_sms == props.multi_processor_count == hopgemm.get_num_sms()
    assert info.max_smem_per_block == 232448  # the SM90 opt-in limit: 227 KiB
    if hasattr(props, "L2_cache_size"):
        assert info.l2_size == props.L2_cache_size
    assert 50 * 2**20 <= info.l2_size <= 64 * 2**20  # H100 / H200: 50 MB (60 MB on some parts)
    assert 1_000_000 < info.clock_khz < 3_000_000 and 1_000_000 < info.memory_clock_khz < 10_000_000
    assert f"sm_{props.major}{props.minor}" in repr(info)
    with pytest.raises(ValueError, match="out of range"):
        hopgemm.device_info(64)
    with pytest.raises(ValueError, match="exceeds the device's"):
        hopgemm.set_num_sms(info.num_sms + 1)


def test_bench_and_bench_kineto_time_a_gemm(monkeypatch):
    m, n, k = 4096, 7168, 4096
    a8, sfa, b8, sfb = make_inputs(m, n, k, False, seed=97)
    d = poisoned(m, n, torch.bfloat16)

    def gemm():
        hopgemm.fp8_gemm_nt((a8, sfa), (b8, sfb), d)

    event_s = bench(gemm, num_warmups=2, num_tests=10)
    kernel_s = bench_kineto(gemm, "sm90_fp8_gemm", num_tests=10, suppress_kineto_output=True)
    both = bench_kineto(gemm, ("sm90_fp8_gemm",), num_tests=5, suppress_kineto_output=True)
    check(d, a8, sfa, b8, sfb, False)
    peak_s = 2 * m * n * k / 1979e12  # the dense FP8 peak: nothing runs faster
    for t in (event_s, kernel_s, both[0]):
        assert peak_s < t < 1.0, (event_s, kernel_s, both)
    assert kernel_s < 2 * event_s and event_s < 10 * kernel_s, "the two timers disagree on what they time"
    # deep_gemm's semantics: 0 for a name no kernel has; a name in two kernels is an AssertionError.
    assert bench_kineto(gemm, ("sm90_fp8_gemm", "no_such_kernel"), num_tests=2, suppress_kineto_output=True)[1] == 0
    with pytest.raises(AssertionError, match="kernels contain 'void'"):  # the GEMM and the L2 flush's fill kernel
        bench_kineto(gemm, "void", num_tests=2)
    monkeypatch.setenv("DG_USE_NVIDIA_TOOLS", "1")
    assert bench_kineto(gemm, "sm90_fp8_gemm") == 1 and bench_kineto(gemm, ("a", "b")) == (1, 1)
