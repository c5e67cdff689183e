"""hopgemm: FP8 and BF16 GEMMs (dense and MoE grouped; FP8 with DeepSeek's fine-grained scaling) and the
DeepSeek-V3.2 indexer kernels for NVIDIA Hopper (SM90), JIT-compiled.

A drop-in for DeepSeek's ``deep_gemm`` (``import hopgemm as deep_gemm``). Tensors are torch tensors or any
DLPack array on a CUDA device (CuPy, JAX, ...); ops run on the current torch stream of the tensors'
device, or on ``stream=``. Importing the package needs no GPU and does not initialise CUDA.
"""
import os as _os
import sys as _sys

from . import _C

_C.init(_os.path.join(_os.path.dirname(_os.path.abspath(__file__)), "include"))

from ._C import (  # noqa: E402
    DeviceInfo,
    HopgemmTypeError,
    HopgemmValueError,
    PrecompileReport,
    device_info,
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
    set_mk_alignment_for_contiguous_layout,
    set_num_sms,
    set_pdl,
    set_tc_util,
)
# Raised and shown as hopgemm.HopgemmValueError / hopgemm.HopgemmTypeError (pickled by that name too).
HopgemmValueError.__module__ = HopgemmTypeError.__module__ = __name__
from ._gemm import bf16_gemm_nn, bf16_gemm_nt, bf16_gemm_tn, bf16_gemm_tt  # noqa: E402
from ._gemm import fp8_gemm_nn, fp8_gemm_nt, fp8_gemm_tn, fp8_gemm_tt  # noqa: E402
from ._gemm import fp8_gemm_nt_skip_head_mid  # noqa: E402
from ._einsum import einsum, fp8_einsum  # noqa: E402
from ._hyperconnection import tf32_hc_prenorm_gemm  # noqa: E402
from ._grouped import (  # noqa: E402
    k_grouped_fp8_gemm_nt_contiguous,
    k_grouped_fp8_gemm_tn_contiguous,
    m_grouped_fp8_gemm_nn_contiguous,
    m_grouped_fp8_gemm_nt_contiguous,
    m_grouped_fp8_gemm_nt_masked,
    m_grouped_bf16_gemm_nn_contiguous,
    m_grouped_bf16_gemm_nt_contiguous,
    m_grouped_bf16_gemm_nt_masked,
    k_grouped_bf16_gemm_tn_contiguous,
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
from ._mqa_logits import (  # noqa: E402
    fp8_fp4_mqa_logits,
    fp8_fp4_paged_mqa_logits,
    fp8_mqa_logits,
    fp8_paged_mqa_logits,
    get_paged_mqa_logits_metadata,
)
from ._heuristics_settings import set_block_size_multiple_of, set_ignore_compile_dims  # noqa: E402
from . import mega, testing, utils  # noqa: E402
from .mega import (  # noqa: E402 (SM100 only: they raise NotImplementedError)
    SymmBuffer,
    bf16_mega_moe,
    fp8_fp4_mega_moe,
    get_symm_buffer_for_mega_moe,
    transform_weights_for_mega_moe,
)
from ._alias import provide_deep_gemm, withdraw_deep_gemm  # noqa: E402
from ._warmup import import_cache_archive, warmup  # noqa: E402
from ._cublaslt import cublaslt_gemm_nn, cublaslt_gemm_nt, cublaslt_gemm_tn, cublaslt_gemm_tt  # noqa: E402

# deep_gemm HEAD's canonical names; the fp8_gemm_* names above are the older ones it keeps as aliases.
fp8_fp4_gemm_nt, fp8_fp4_gemm_nn, fp8_fp4_gemm_tn, fp8_fp4_gemm_tt = fp8_gemm_nt, fp8_gemm_nn, fp8_gemm_tn, fp8_gemm_tt
m_grouped_fp8_fp4_gemm_nt_contiguous = m_grouped_fp8_gemm_nt_contiguous
m_grouped_fp8_fp4_gemm_nn_contiguous = m_grouped_fp8_gemm_nn_contiguous
m_grouped_fp8_fp4_gemm_nt_masked = m_grouped_fp8_gemm_nt_masked
fp8_m_grouped_gemm_nt_masked = m_grouped_fp8_gemm_nt_masked  # deep_gemm's legacy alias
bf16_m_grouped_gemm_nt_masked = m_grouped_bf16_gemm_nt_masked  # deep_gemm's legacy alias
from .utils import *  # noqa: E402,F401,F403 (deep_gemm re-exports its utils at the top level)

try:
    from ._version import __version__  # noqa: E402 (written by scikit-build-core at install)
except ImportError:  # running from a source tree
    __version__ = "0+unknown"


# ---- torch.library registration (torch.ops.hopgemm.*, for torch.compile / opcheck) -----------------------
# Never imports torch itself. The ops are registered when both hopgemm and torch are imported, in either
# order: now if torch already is, else by a one-shot post-import hook on `torch`. The plain hopgemm.* calls
# above do not use them (the dispatcher costs microseconds per call).


def register_torch_ops() -> "torch._ops._OpNamespace":
    """Register hopgemm's ops with torch.library (idempotent; imports torch) and return ``torch.ops.hopgemm``.
    Normally automatic; call it to get registration errors raised instead of warned."""
    from . import _torch_ops

    return _torch_ops.namespace()


def __getattr__(name):
    if name == "torch_ops":  # hopgemm.torch_ops: torch.ops.hopgemm, registered on first access
        return register_torch_ops()
    error = AttributeError(f"module {__name__!r} has no attribute {name!r}")
    error.name, error.obj = name, _sys.modules[__name__]  # as a plain module's miss carries them (Python >= 3.10)
    raise error


def _register_torch_ops_quietly():
    library = getattr(_sys.modules.get("torch"), "library", None)
    if not hasattr(library, "custom_op"):  # torch < 2.4, a stand-in, or a torch still importing
        return
    try:
        register_torch_ops()
    except Exception as e:  # never break `import hopgemm` / `import torch` over the optional ops
        import warnings

        warnings.warn(f"hopgemm: torch.ops.hopgemm not registered ({type(e).__name__}: {e}); "
                      "call hopgemm.register_torch_ops() to see the error", RuntimeWarning, stacklevel=2)


class _TorchImportHook:
    """sys.meta_path entry that runs _register_torch_ops_quietly right after `torch` finishes importing, then
    removes itself. Until then it only compares each imported name with "torch"; for "torch" it returns the
    regular finders' spec with the loader's exec_module wrapped (a bare find_spec("torch") probe, as
    availability checks do, leaves the hook in place for the real import)."""

    _busy = False

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "torch" or self._busy:
            return None
        self._busy = True
        try:
            spec = None
            for finder in list(_sys.meta_path):
                find = getattr(finder, "find_spec", None)
                if finder is not self and find is not None:
                    spec = find(fullname, path, target)
                    if spec is not None:
                        break
        finally:
            self._busy = False
        loader = getattr(spec, "loader", None)
        if isinstance(loader, type) or not hasattr(loader, "exec_module") or not hasattr(loader, "__dict__"):
            return spec  # nothing to wrap per instance: hopgemm.register_torch_ops() stays available
        real_exec_module = loader.exec_module
        hook = self

        def exec_module(module):
            if module.__name__ != "torch":  # a loader shared with other modules
                return real_exec_module(module)
            try:
                real_exec_module(module)
            finally:
                loader.__dict__.pop("exec_module", None)
            hook.remove()
            _register_torch_ops_quietly()

        loader.exec_module = exec_module
        return spec

    def remove(self):
        try:
            _sys.meta_path.remove(self)
        except ValueError:
            pass


if "torch" in _sys.modules:
    _register_torch_ops_quietly()
elif not any(type(f).__qualname__ == "_TorchImportHook" and type(f).__module__ == __name__ for f in _sys.meta_path):
    _sys.meta_path.insert(0, _TorchImportHook())
