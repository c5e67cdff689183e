"""hopgemm: FP8 and BF16 GEMM kernels for NVIDIA Hopper (SM90), compiled at run time.

A drop-in for DeepSeek's ``deep_gemm`` (``import hopgemm as deep_gemm``). Tensors are torch tensors or any
DLPack array on a CUDA device (CuPy, JAX, ...); ops run on the current torch stream of the tensors'
device, or on ``stream=``. Importing the package needs no GPU and does not initialise CUDA.
"""
import os as _os

from . import _C

_C.init(_os.path.join(_os.path.dirname(_os.path.abspath(__file__)), "include"))

from ._C import (  # noqa: E402
    DeviceInfo,
    PrecompileReport,
    device_info,
    fp8_gemm_nn,
    fp8_gemm_nt,
    fp8_gemm_tn,
    fp8_gemm_tt,
    get_cache_dir,
    get_jit_policy,
    get_num_sms,
    get_pdl,
    get_tc_util,
    gpu_available,
    precompile,
    precompile_suites,
    set_cache_dir,
    set_jit_policy,
    set_num_sms,
    set_pdl,
    set_tc_util,
)
from ._layout import (  # noqa: E402
    get_k_alignment_for_contiguous_layout,
    get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor,
    get_m_alignment_for_contiguous_layout,
    get_mk_alignment_for_contiguous_layout,
    get_mn_major_tma_aligned_packed_ue8m0_tensor,
    get_mn_major_tma_aligned_tensor,
    get_theoretical_mk_alignment_for_contiguous_layout,
    get_tma_aligned_size,
    transform_sf_into_required_layout,
)
from . import testing, utils  # noqa: E402

# deep_gemm HEAD's canonical names; the fp8_gemm_* names above are the older ones it keeps as aliases.
fp8_fp4_gemm_nt, fp8_fp4_gemm_nn, fp8_fp4_gemm_tn, fp8_fp4_gemm_tt = fp8_gemm_nt, fp8_gemm_nn, fp8_gemm_tn, fp8_gemm_tt
from .utils import *  # noqa: E402,F401,F403 (deep_gemm re-exports its utils at the top level)

try:
    from ._version import __version__  # noqa: E402 (written by scikit-build-core at install)
except ImportError:  # running from a source tree
    __version__ = "0+unknown"
