"""Settings, JIT controls and error mapping, without a GPU."""
import os
import subprocess
import sys

import pytest

import hopgemm
from hopgemm import _C


def run_python(code, **env):
    environ = dict(os.environ, **env)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=environ, timeout=120)


def test_tc_util_validation():
    try:
        hopgemm.set_tc_util(55)
        assert hopgemm.get_tc_util() == 55
        for bad in (0, -1, 101):
            with pytest.raises(ValueError, match="set_tc_util"):
                hopgemm.set_tc_util(bad)
        assert hopgemm.get_tc_util() == 55
        with pytest.raises(TypeError):
            hopgemm.set_tc_util("50")
    finally:
        hopgemm.set_tc_util(100)


def test_mk_alignment_for_contiguous_layout():
    assert hopgemm.get_mk_alignment_for_contiguous_layout() == 128
    try:
        hopgemm.set_mk_alignment_for_contiguous_layout(256)
        for get in (hopgemm.get_mk_alignment_for_contiguous_layout, hopgemm.get_m_alignment_for_contiguous_layout,
                    hopgemm.get_k_alignment_for_contiguous_layout, hopgemm.utils.get_mk_alignment_for_contiguous_layout,
                    hopgemm.get_theoretical_mk_alignment_for_contiguous_layout):
            assert get() == 256, get
        for bad in (0, -64, 96, 100):  # a positive multiple of 64
            with pytest.raises(ValueError, match="set_mk_alignment_for_contiguous_layout"):
                hopgemm.set_mk_alignment_for_contiguous_layout(bad)
        assert hopgemm.get_mk_alignment_for_contiguous_layout() == 256
    finally:
        hopgemm.set_mk_alignment_for_contiguous_layout(128)


def test_num_sms_validation():
    with pytest.raises(ValueError, match="set_num_sms"):
        hopgemm.set_num_sms(-1)
    if not hopgemm.gpu_available():
        try:
            hopgemm.set_num_sms(78)
            assert hopgemm.get_num_sms() == 78
        finally:
            hopgemm.set_num_sms(0)
        # The default is "all SMs of the device", which needs a device.
        with pytest.raises(RuntimeError):
            hopgemm.get_num_sms()
        with pytest.raises(RuntimeError):
            hopgemm.device_info()


def test_pdl():
    try:
        hopgemm.set_pdl(True)
        assert hopgemm.get_pdl() is True
        hopgemm.set_pdl(False)
        assert hopgemm.get_pdl() is False
    finally:
        hopgemm.set_pdl(False)


def test_alignment_helpers():
    assert hopgemm.get_mk_alignment_for_contiguous_layout() == 128
    assert hopgemm.get_theoretical_mk_alignment_for_contiguous_layout(4096) == 128
    assert hopgemm.get_tma_aligned_size(5, 4) == 8
    assert hopgemm.get_tma_aligned_size(8, 4) == 8
    assert hopgemm.get_tma_aligned_size(0, 4) == 0
    assert hopgemm.get_tma_aligned_size(1, 2) == 8
    assert hopgemm.get_tma_aligned_size(7, 1) == 16
    assert hopgemm.get_tma_aligned_size(3, 8) == 4
    assert hopgemm.get_tma_aligned_size(1, 16) == 1
    with pytest.raises(ValueError):
        hopgemm.get_tma_aligned_size(5, 3)


def test_mn_major_tma_aligned_strides():
    assert _C.mn_major_tma_aligned_strides((5, 3), 4) == (1, 8)
    assert _C.mn_major_tma_aligned_strides((8, 3), 4) == (1, 8)
    assert _C.mn_major_tma_aligned_strides((2, 5, 3), 4) == (24, 1, 8)
    with pytest.raises(ValueError):
        _C.mn_major_tma_aligned_strides((5,), 4)


def test_jit_policy():
    try:
        for policy in ("warn_on_miss", "error_on_miss", "allow"):
            hopgemm.set_jit_policy(policy)
            assert hopgemm.get_jit_policy() == policy
        with pytest.raises(ValueError):
            hopgemm.set_jit_policy("sometimes")
        assert hopgemm.get_jit_policy() == "allow"
    finally:
        hopgemm.set_jit_policy("allow")


def test_cache_dir(tmp_path):
    default = hopgemm.get_cache_dir()
    try:
        hopgemm.set_cache_dir(tmp_path)  # os.PathLike accepted
        assert hopgemm.get_cache_dir() == str(tmp_path)
    finally:
        hopgemm.set_cache_dir("")
    assert hopgemm.get_cache_dir() == default


def test_cache_dir_from_environment(tmp_path):
    result = run_python("import hopgemm; print(hopgemm.get_cache_dir())", HOPGEMM_CACHE_DIR=str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(tmp_path)


def test_bad_environment_value_is_a_python_error():
    result = run_python(
        "import hopgemm\n"
        "try:\n"
        "    hopgemm.get_jit_policy()\n"
        "except ValueError as e:\n"
        "    print('ValueError', e)\n",
        HOPGEMM_JIT_POLICY="sometimes")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("ValueError"), result.stdout
    assert "HOPGEMM_JIT_POLICY" in result.stdout


def test_bad_boolean_environment_value():
    result = run_python(
        "import hopgemm\n"
        "try:\n"
        "    hopgemm.get_cache_dir()\n"
        "except ValueError as e:\n"
        "    print('ValueError', e)\n",
        HOPGEMM_JIT_DEBUG="maybe")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("ValueError"), result.stdout
    assert "HOPGEMM_JIT_DEBUG" in result.stdout


def test_precompile_unknown_suite():
    assert "deepseek-v3" in hopgemm.precompile_suites()
    with pytest.raises(ValueError, match="no-such-suite"):
        hopgemm.precompile("no-such-suite")
