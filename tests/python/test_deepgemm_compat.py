"""What code written for DeepGEMM relies on beyond names and signatures (issue 31): errors catchable as RuntimeError,
`deep_gemm` importable as hopgemm on request only, DeepGEMM's testing decorators and helpers, its UE8M0 / FP4 tensor
helpers, its two heuristics settings, and the SM100-only names. CPU only."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import hopgemm
from hopgemm import testing

torch = pytest.importorskip("torch", reason="torch is not installed")  # the helpers are torch code


# ---- errors -------------------------------------------------------------------------------------------------------

def test_invalid_arguments_are_also_runtime_errors():
    assert issubclass(hopgemm.HopgemmValueError, ValueError) and issubclass(hopgemm.HopgemmValueError, RuntimeError)
    assert issubclass(hopgemm.HopgemmTypeError, TypeError) and issubclass(hopgemm.HopgemmTypeError, RuntimeError)
    assert hopgemm.HopgemmValueError.__module__ == "hopgemm"
    a = np.zeros((128, 128), np.uint8)
    sf = np.ones((128, 1), np.float32)
    with pytest.raises(RuntimeError, match="argument 'a' is in host memory") as caught:  # a C++ check
        hopgemm.fp8_gemm_nt((a, sf), (a, sf), np.zeros((128, 128), np.float32))
    assert isinstance(caught.value, ValueError)
    with pytest.raises(RuntimeError, match="must be a \\(tensor, scale factors\\) pair") as caught:
        hopgemm.fp8_gemm_nt(a, (a, sf), a)
    assert isinstance(caught.value, TypeError)
    with pytest.raises(RuntimeError, match="pass ks_cpu or ks, not both") as caught:  # a Python-side check
        hopgemm.k_grouped_fp8_gemm_nt_contiguous((a, sf), (a, sf), a, [128], a, ks=[128])
    assert isinstance(caught.value, ValueError)


def test_fp4_operands_name_sm100():
    a = np.zeros((128, 64), np.int8)  # FP4 as DeepGEMM packs it
    sf = np.ones((128, 1), np.float32)
    with pytest.raises(NotImplementedError, match=r"FP4 \(e2m1\).*SM100 \(Blackwell\).*SM90 \(Hopper\)"):
        hopgemm.fp8_fp4_gemm_nt((a, sf), (a, sf), np.zeros((128, 128), np.float32))


@pytest.mark.parametrize("name", ["SymmBuffer", "get_symm_buffer_for_mega_moe", "transform_weights_for_mega_moe",
                                  "fp8_fp4_mega_moe", "bf16_mega_moe"])
def test_mega_moe_names_say_sm100(name):
    fn = getattr(hopgemm, name)
    assert fn is getattr(hopgemm.mega, name)
    args = {"SymmBuffer": 7, "get_symm_buffer_for_mega_moe": 6, "transform_weights_for_mega_moe": 2}.get(name, 4)
    with pytest.raises(NotImplementedError, match=f"{name}: DeepGEMM's Mega MoE runs on SM100"):
        fn(*([None] * args))


# ---- heuristics settings -------------------------------------------------------------------------------------------

def test_set_ignore_compile_dims():
    hopgemm.set_ignore_compile_dims(True)
    hopgemm.set_ignore_compile_dims(False)
    with pytest.raises(TypeError):
        hopgemm.set_ignore_compile_dims("yes")


def test_set_block_size_multiple_of():
    for value in (1, 8, (64, 8), (128, 4), (7, 2)):  # block-M is not constrained on SM90 (DeepGEMM neither)
        hopgemm.set_block_size_multiple_of(value)
    with pytest.raises(NotImplementedError, match="block_n a multiple of 16"):
        hopgemm.set_block_size_multiple_of(16)
    with pytest.raises(NotImplementedError, match="block_n a multiple of 32"):
        hopgemm.set_block_size_multiple_of((1, 32))
    with pytest.raises(ValueError, match="positive"):
        hopgemm.set_block_size_multiple_of(0)
    with pytest.raises(TypeError):
        hopgemm.set_block_size_multiple_of((1, 2, 3))


# ---- deep_gemm as hopgemm, on request -------------------------------------------------------------------------------

def _python(code, extra_path=None):
    env = dict(os.environ)
    if extra_path:
        env["PYTHONPATH"] = extra_path + os.pathsep + env.get("PYTHONPATH", "")
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env,
                            cwd="/")
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def test_provide_deep_gemm_makes_find_spec_find_hopgemm():
    out = _python("""
        import importlib.util, sys
        import hopgemm
        assert importlib.util.find_spec("deep_gemm") is None  # nothing without the opt-in
        assert hopgemm.provide_deep_gemm() is True
        assert importlib.util.find_spec("deep_gemm") is not None
        import deep_gemm
        from deep_gemm.testing import bench_kineto, calc_diff
        from deep_gemm.utils.math import per_token_cast_to_fp4
        import deep_gemm.utils.layout as layout
        assert deep_gemm is hopgemm and deep_gemm.utils is hopgemm.utils and layout is hopgemm.utils.layout
        assert bench_kineto is hopgemm.testing.bench_kineto and per_token_cast_to_fp4 is hopgemm.per_token_cast_to_fp4
        assert hopgemm.__spec__.name == "hopgemm" and hopgemm.utils.__spec__.name == "hopgemm.utils"
        assert sys.modules["deep_gemm.utils.math"] is hopgemm.utils.math
        try:
            import deep_gemm.no_such_module
        except ModuleNotFoundError as e:
            assert e.name == "deep_gemm.no_such_module", e.name
        else:
            raise AssertionError("deep_gemm.no_such_module imported")
        hopgemm.withdraw_deep_gemm()
        assert "deep_gemm" not in sys.modules and importlib.util.find_spec("deep_gemm") is None
        print("ok")
    """)
    assert out.strip() == "ok"


def test_provide_deep_gemm_never_shadows_a_real_one(tmp_path):
    real = tmp_path / "deep_gemm"
    real.mkdir()
    (real / "__init__.py").write_text("REAL = True\n")
    (real / "testing.py").write_text("REAL_TESTING = True\n")
    out = _python("""
        import importlib.util, sys
        import hopgemm
        assert hopgemm.provide_deep_gemm() is False  # a real DeepGEMM is installed: it stays the one imported
        import deep_gemm, deep_gemm.testing
        assert deep_gemm.REAL and deep_gemm.testing.REAL_TESTING and deep_gemm is not hopgemm
        for name in ("deep_gemm", "deep_gemm.testing"):
            del sys.modules[name]
        assert hopgemm.provide_deep_gemm(force=True) is True
        import deep_gemm
        assert deep_gemm is hopgemm
        print("ok")
    """, extra_path=str(tmp_path))
    assert out.strip() == "ok"


# ---- deep_gemm.testing ----------------------------------------------------------------------------------------------

def test_test_filter_and_ignore_env(monkeypatch, capsys):
    ran = []

    @testing.test_filter(lambda: False)
    def test_skipped():
        ran.append("skipped")

    @testing.test_filter(lambda: True)
    def test_run(x):
        ran.append(x)
        return x

    before = len(testing._filtered)
    assert test_skipped() is None and test_run(3) == 3 and ran == [3]
    assert testing._filtered[before:] == ["test_skipped"]
    assert "test_skipped:\n > Filtered by" in capsys.readouterr().out

    monkeypatch.setenv("DG_SOMETHING", "1")

    @testing.ignore_env("DG_SOMETHING", lambda: True)
    def sees():
        return os.environ.get("DG_SOMETHING")

    @testing.ignore_env("DG_SOMETHING", lambda: False)
    def keeps():
        return os.environ.get("DG_SOMETHING")

    @testing.ignore_env("DG_SOMETHING", lambda: True)
    def raises():
        raise KeyError("x")

    assert sees() is None and keeps() == "1" and os.environ["DG_SOMETHING"] == "1"
    with pytest.raises(KeyError):
        raises()
    assert os.environ["DG_SOMETHING"] == "1"


def test_assert_bitwise_equal():
    x = torch.arange(12, dtype=torch.float32).view(3, 4)
    testing.assert_bitwise_equal(x, x.clone())
    y = x.clone()
    y[2, 1] = -0.0 if float(x[2, 1]) == 0 else float(x[2, 1]) + 1
    with pytest.raises(AssertionError, match=r"bitwise mismatch \(d\): .* at \(2, 1\)"):
        testing.assert_bitwise_equal(x, y, "d")
    with pytest.raises(AssertionError, match="shapes"):
        testing.assert_bitwise_equal(x, x.view(4, 3))
    zero, negative_zero = torch.zeros(1), -torch.zeros(1)
    with pytest.raises(AssertionError):  # equal values, different bits
        testing.assert_bitwise_equal(zero, negative_zero)


def test_suppress_stdout_stderr(capfd):
    with testing.suppress_stdout_stderr():
        print("hidden")
        os.write(2, b"hidden too\n")
    print("shown")
    out, err = capfd.readouterr()
    assert out == "shown\n" and err == ""
    with testing.empty_suppress():
        print("also shown")
    assert capfd.readouterr().out == "also shown\n"


def test_bench_kineto_under_nvidia_tools_and_its_argument(monkeypatch):
    monkeypatch.setenv("DG_USE_NVIDIA_TOOLS", "1")
    assert testing.bench_kineto(lambda: None, "gemm_") == 1
    assert testing.bench_kineto(lambda: None, ("nvjet", "reduce")) == (1, 1)
    with pytest.raises(TypeError, match="a str or a tuple of str"):
        testing.bench_kineto(lambda: None, ["gemm_"])


# ---- deep_gemm.utils: UE8M0 and FP4 helpers ----------------------------------------------------------------------

def test_pack_and_unpack_ue8m0():
    exponents = torch.tensor([[0, 1, 127, 128, 200, 254, 3, 99]], dtype=torch.int32)
    sf = (exponents << 23).view(torch.float32)
    packed = hopgemm.pack_ue8m0_to_int(sf)
    assert packed.dtype == torch.int32 and packed.shape == (1, 2)
    assert packed[0, 0].item() == 0 | 1 << 8 | 127 << 16 | (128 << 24) - (1 << 32)  # little-endian bytes
    assert torch.equal(hopgemm.unpack_ue8m0_from_int(packed), sf)
    with pytest.raises(ValueError, match="power of two"):
        hopgemm.pack_ue8m0_to_int(torch.tensor([1.5, 1, 1, 1]))
    with pytest.raises(ValueError, match="multiple of 4"):
        hopgemm.pack_ue8m0_to_int(torch.ones(3))


def test_per_custom_dims_cast_to_fp8():
    x = torch.randn(4, 6, 8) * torch.arange(1, 5).view(4, 1, 1)
    for dims in ((0,), (0, 2), (-1,)):
        for use_ue8m0 in (False, True):
            x8, sf = hopgemm.per_custom_dims_cast_to_fp8(x, dims, use_ue8m0)
            keep = {d % 3 for d in dims}
            amax = x.abs().amax(dim=tuple(d for d in range(3) if d not in keep), keepdim=True).clamp(min=1e-4)
            expected = amax / 448
            if use_ue8m0:
                expected = hopgemm.ceil_to_ue8m0(expected)
            assert torch.equal(sf, expected.squeeze())
            assert x8.dtype == torch.float8_e4m3fn and x8.shape == x.shape
            assert torch.equal(x8, (x * (1.0 / expected)).to(torch.float8_e4m3fn))


E2M1 = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]


def _nearest_e2m1(v):
    """The e2m1 value nearest to v (ties to the smaller magnitude, saturating at 6), by brute force."""
    m = abs(v)
    best = min(E2M1, key=lambda g: (abs(g - m), g))
    return -best if v < 0 and best != 0 else best


@pytest.mark.parametrize("use_ue8m0,use_packed", [(False, False), (True, False), (True, True)])
def test_fp4_cast_round_trip(use_ue8m0, use_packed):
    torch.manual_seed(0)
    m, n, gran_k = 6, 200, 64
    x = torch.randn(m, n) * 3
    x[0, :4] = torch.tensor([0.25, -0.75, 5.0, -0.0])  # ties and -0 (scaled by the row's sf below)
    packed, sf = hopgemm.per_token_cast_to_fp4(x, use_ue8m0, gran_k, use_packed)
    assert packed.dtype == torch.int8 and packed.shape == (m, n // 2)
    scales = hopgemm.unpack_ue8m0_from_int(sf) if use_packed else sf
    assert scales.shape[1] >= -(-n // gran_k)
    back = hopgemm.cast_back_from_fp4(packed, sf, gran_k, use_packed)
    for i in range(m):
        for j in range(n):
            s = scales[i, j // gran_k]
            scaled = float(x[i, j] * (1.0 / s))  # in FP32, as the cast computes it
            assert back[i, j] == torch.tensor(_nearest_e2m1(scaled)) * s, (i, j)
    transposed = hopgemm.transpose_packed_fp4(packed[:, :50])  # [6, 50] codes -> [100, 3]
    codes = torch.stack((packed.view(torch.uint8) & 15, packed.view(torch.uint8) >> 4), -1).view(m, n)
    codes_t = torch.stack((transposed.view(torch.uint8) & 15, transposed.view(torch.uint8) >> 4), -1).view(100, m)
    assert torch.equal(codes_t, codes[:, :100].t())


def test_fp4_helpers_match_deepgemms_where_its_source_is_at_hand():
    # Bit for bit against DeepGEMM's own deep_gemm/utils/math.py, loaded from the anchor tarball (plain torch code);
    # where the tarball is absent (CI's clone) the round-trip test above stands alone.
    import importlib.util
    import tarfile
    import tempfile

    spec = importlib.util.spec_from_file_location(
        "gen", os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "gen_deepgemm_api.py"))
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    tarball = gen.find_tarball()
    if tarball is None:
        return
    with tarfile.open(tarball) as tar, tempfile.TemporaryDirectory() as tmp:
        member = next(m for m in tar.getmembers() if m.name.endswith("deep_gemm/utils/math.py"))
        member.name = "deepgemm_math.py"
        tar.extract(member, tmp)
        dg_spec = importlib.util.spec_from_file_location("deepgemm_math", os.path.join(tmp, "deepgemm_math.py"))
        dg = importlib.util.module_from_spec(dg_spec)
        dg_spec.loader.exec_module(dg)
    torch.manual_seed(1)
    x = torch.randn(8, 96, dtype=torch.bfloat16) * 4
    for use_ue8m0, packed_sf in ((False, False), (True, True)):
        ours = hopgemm.per_token_cast_to_fp4(x, use_ue8m0, 32, packed_sf)
        theirs = dg.per_token_cast_to_fp4(x, use_ue8m0, 32, packed_sf)
        assert all(torch.equal(o, t) for o, t in zip(ours, theirs))
        assert torch.equal(hopgemm.cast_back_from_fp4(*ours, 32, packed_sf), dg.cast_back_from_fp4(*theirs, 32,
                                                                                                    packed_sf))
    assert torch.equal(hopgemm.transpose_packed_fp4(ours[0]), dg.transpose_packed_fp4(ours[0]))
    y = torch.randn(3, 5, 7)
    for dims in ((0,), (1, 2)):
        assert all(torch.equal(o, t) for o, t in zip(hopgemm.per_custom_dims_cast_to_fp8(y, dims, True),
                                                     dg.per_custom_dims_cast_to_fp8(y, dims, True)))


# ---- layout helpers with DeepGEMM's arguments ------------------------------------------------------------------------

def test_k_grouped_packed_ue8m0_arguments():
    op = hopgemm.get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor
    sf = np.ones((3, 256), np.float32)
    layout = np.zeros(2, np.int32)
    with pytest.raises(NotImplementedError, match="use_psum_layout=True is DeepGEMM's SM100"):
        op(sf, layout, [128, 256], 128, 128, use_psum_layout=True)
    with pytest.raises(ValueError, match="gran_k must be 32 or 128"):
        op(sf, layout, [128, 256], 64, 128)
    with pytest.raises(ValueError, match="k_alignment must be a positive multiple of 32"):
        op(sf, layout, [128, 256], 128, 48)
    with pytest.raises(ValueError, match="'ks_cpu' must list each group's K"):
        op(sf, layout, None, 128, 128)
    with pytest.raises(ValueError, match=r"'grouped_layout' must be \[3\]"):
        op(sf, layout, [128, 128, 0], 128, 128)
    with pytest.raises(ValueError, match="host memory"):  # the arguments are right: the C++ op looks at the tensors
        op(sf, layout, [128, 256], 128, 128)
