"""The package imports without a GPU, without touching CUDA, and has deep_gemm's names."""
import os
import subprocess
import sys

import hopgemm

# deep_gemm names that exist in hopgemm today.
DEEP_GEMM_NAMES = [
    "set_num_sms", "get_num_sms", "set_tc_util", "get_tc_util", "set_pdl", "get_pdl",
    "get_tma_aligned_size", "get_mk_alignment_for_contiguous_layout",
    "get_m_alignment_for_contiguous_layout", "get_k_alignment_for_contiguous_layout",
    "get_theoretical_mk_alignment_for_contiguous_layout",
    "get_mn_major_tma_aligned_tensor", "get_mn_major_tma_aligned_packed_ue8m0_tensor",
    "get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor", "transform_sf_into_required_layout",
    "ceil_div", "align", "ceil_to_ue8m0", "per_token_cast_to_fp8", "per_block_cast_to_fp8",
    "per_channel_cast_to_fp8",
    "fp8_gemm_nt", "fp8_gemm_nn", "fp8_gemm_tn", "fp8_gemm_tt",
    "fp8_fp4_gemm_nt", "fp8_fp4_gemm_nn", "fp8_fp4_gemm_tn", "fp8_fp4_gemm_tt",
    "m_grouped_fp8_gemm_nt_contiguous", "m_grouped_fp8_gemm_nn_contiguous", "m_grouped_fp8_gemm_nt_masked",
    "m_grouped_fp8_fp4_gemm_nt_contiguous", "m_grouped_fp8_fp4_gemm_nn_contiguous", "m_grouped_fp8_fp4_gemm_nt_masked",
    "fp8_m_grouped_gemm_nt_masked", "k_grouped_fp8_gemm_nt_contiguous", "k_grouped_fp8_gemm_tn_contiguous",
    "set_mk_alignment_for_contiguous_layout",
]
HOPGEMM_NAMES = ["set_jit_policy", "get_jit_policy", "precompile", "precompile_suites", "set_cache_dir",
                 "get_cache_dir", "gpu_available", "device_info"]


def run_python(code, **env):
    environ = dict(os.environ, **env)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=environ, timeout=120)


def test_names_exist():
    for name in DEEP_GEMM_NAMES + HOPGEMM_NAMES:
        assert callable(getattr(hopgemm, name)), name
    for name in ["ceil_div", "align", "ceil_to_ue8m0", "per_token_cast_to_fp8", "per_block_cast_to_fp8",
                 "per_channel_cast_to_fp8", "get_tma_aligned_size", "get_mn_major_tma_aligned_tensor",
                 "get_mk_alignment_for_contiguous_layout"]:
        assert callable(getattr(hopgemm.utils, name)), name
    for name in ["calc_diff", "count_bytes", "bench", "bench_kineto"]:
        assert callable(getattr(hopgemm.testing, name)), name


def test_aliases():
    assert hopgemm.get_m_alignment_for_contiguous_layout is hopgemm.get_mk_alignment_for_contiguous_layout
    assert hopgemm.get_k_alignment_for_contiguous_layout is hopgemm.get_mk_alignment_for_contiguous_layout
    for kind in ("nt_contiguous", "nn_contiguous", "nt_masked"):  # deep_gemm HEAD's canonical names
        assert getattr(hopgemm, f"m_grouped_fp8_fp4_gemm_{kind}") is getattr(hopgemm, f"m_grouped_fp8_gemm_{kind}")
    assert hopgemm.fp8_m_grouped_gemm_nt_masked is hopgemm.m_grouped_fp8_gemm_nt_masked


def test_drop_in_import():
    result = run_python(
        "import hopgemm as deep_gemm\n"
        "from hopgemm.utils import per_token_cast_to_fp8, ceil_div\n"
        "from hopgemm.testing import calc_diff, bench_kineto\n"
        "assert deep_gemm.get_mk_alignment_for_contiguous_layout() == 128\n"
        "print(deep_gemm.__version__)\n")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip()


def test_import_without_any_device():
    # No visible device: import and the CPU-side API must work, CUDA must not be needed.
    result = run_python(
        "import sys, hopgemm\n"
        "assert 'torch' not in sys.modules, 'import hopgemm imported torch'\n"
        "assert hopgemm.get_tma_aligned_size(5, 4) == 8\n"
        "hopgemm.set_tc_util(90); assert hopgemm.get_tc_util() == 90\n",
        CUDA_VISIBLE_DEVICES="")
    assert result.returncode == 0, result.stderr


def test_import_does_not_initialise_cuda():
    # If the import created a CUDA context, cudaGetDeviceCount would be answered from it; instead check
    # the process has no /dev/nvidia* files open after the import (the driver opens them on cuInit).
    result = run_python(
        "import os, hopgemm\n"
        "fds = [os.readlink(f'/proc/self/fd/{f}') for f in os.listdir('/proc/self/fd')\n"
        "       if os.path.exists(f'/proc/self/fd/{f}')]\n"
        "opened = [f for f in fds if f.startswith('/dev/nvidia')]\n"
        "assert not opened, opened\n")
    assert result.returncode == 0, result.stderr


def test_include_dir_is_bundled():
    include = os.path.join(os.path.dirname(hopgemm.__file__), "include", "hopgemm")
    assert os.path.isdir(include), include
    assert os.path.isfile(os.path.join(include, "device", "common.cuh"))
