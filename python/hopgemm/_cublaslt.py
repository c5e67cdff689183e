"""DeepGEMM's cuBLASLt wrappers (``cublaslt_gemm_nt/nn/tn/tt``): the baseline its tests time hopgemm's kernels against.

The optional part of the package that uses cuBLASLt: the library is opened at the first call (``ctypes``), never at
import and never by the core library, so hopgemm itself neither links nor needs it. Which one: the libcublasLt already
loaded into the process (torch's, when torch has used cuBLAS), else the one of torch's CUDA wheels, else the CUDA
toolkit's (``$CUDA_HOME/lib64``), else the loader's search path.

Semantics are DeepGEMM's (csrc/jit_kernels/impls/smxx_cublaslt.hpp): D[M, N] = A[M, K] @ B[N, K]^T (+ C), any input
type cuBLASLt takes (BF16, FP16, FP32, FP8 e4m3/e5m2, unscaled), D in BF16 or FP32 and row-major, compute type
CUBLAS_COMPUTE_32F_FAST_TF32 with FP32 alpha/beta, FP8 fast accumulation off, the SM-count target set to all SMs,
a 32 MiB workspace, cuBLASLt's top heuristic; with C, beta = 1 (C is first copied into D where they differ). M or N
of 0 does nothing; K of 0 writes C (or zeros). Tensors are torch tensors on a CUDA device; the call runs on torch's
current stream of D's device.
"""
import ctypes
import glob
import os
import sys
import threading
from typing import Optional

from . import _C
from ._tensors import Tensor

# cuBLAS / CUDA enum values (cublas_api.h, library_types.h, cublasLt.h).
_CUBLAS_OP_N, _CUBLAS_OP_T = 0, 1
_CUBLAS_COMPUTE_32F_FAST_TF32 = 77
_CUDA_R_32F = 0
_CUDA_TYPES = {"float32": 0, "float16": 2, "bfloat16": 14, "float8_e4m3fn": 28, "float8_e5m2": 29}
_DESC_SCALE_TYPE, _DESC_TRANSA, _DESC_TRANSB, _DESC_SM_COUNT_TARGET, _DESC_FAST_ACCUM = 1, 3, 4, 15, 25
_PREF_MAX_WORKSPACE_BYTES, _PREF_REDUCTION_SCHEME_MASK = 1, 3
_REDUCTION_SCHEME_NONE, _REDUCTION_SCHEME_COMPUTE_TYPE = 0, 2
_WORKSPACE_BYTES = 32 * 1024 * 1024  # DeepGEMM's kCublasLtWorkspaceSize


class _HeuristicResult(ctypes.Structure):  # cublasLtMatmulHeuristicResult_t
    _fields_ = [("algo", ctypes.c_uint64 * 8), ("workspace_size", ctypes.c_size_t), ("state", ctypes.c_int),
                ("waves_count", ctypes.c_float), ("reserved", ctypes.c_int * 4)]


def _library_candidates():
    try:
        with open("/proc/self/maps") as maps:
            loaded = sorted({line.split()[-1] for line in maps if "/libcublasLt.so" in line})
    except OSError:
        loaded = []
    torch = sys.modules.get("torch")
    wheels = []
    if torch is not None and getattr(torch, "__file__", None):
        site = os.path.dirname(os.path.dirname(torch.__file__))
        wheels = sorted(glob.glob(os.path.join(site, "nvidia", "*", "lib", "libcublasLt.so*")) +
                        glob.glob(os.path.join(site, "nvidia", "cublas", "lib", "libcublasLt.so*")), reverse=True)
    cuda_home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH") or "/usr/local/cuda"
    toolkit = sorted(glob.glob(os.path.join(cuda_home, "lib64", "libcublasLt.so*")), reverse=True)
    return list(dict.fromkeys(loaded + wheels + toolkit + ["libcublasLt.so"]))


class _Library:
    """libcublasLt opened once, its handle (one per process, as DeepGEMM's) and a workspace per device."""

    def __init__(self):
        self.lib, self.path, self.handle, self.workspaces = None, None, None, {}
        self.lock = threading.Lock()

    def open(self):
        with self.lock:
            if self.lib is None:
                tried = []
                for path in _library_candidates():
                    try:
                        lib = ctypes.CDLL(path)
                    except OSError as e:
                        tried.append(f"{path} ({e})")
                        continue
                    self._declare(lib)
                    self.lib, self.path = lib, path
                    break
                else:
                    raise _C.HopgemmValueError("cublaslt_gemm: cuBLASLt was not found (install torch's CUDA wheels or "
                                               "the CUDA toolkit, or set CUDA_HOME); tried " + "; ".join(tried))
        return self

    @staticmethod
    def _declare(lib):
        p, i32, u64, i64 = ctypes.c_void_p, ctypes.c_int, ctypes.c_uint64, ctypes.c_int64
        for name, args in (("cublasLtCreate", [ctypes.POINTER(p)]),
                           ("cublasLtMatrixLayoutCreate", [ctypes.POINTER(p), i32, u64, u64, i64]),
                           ("cublasLtMatrixLayoutSetAttribute", [p, i32, p, ctypes.c_size_t]),
                           ("cublasLtMatrixLayoutDestroy", [p]),
                           ("cublasLtMatmulDescCreate", [ctypes.POINTER(p), i32, i32]),
                           ("cublasLtMatmulDescSetAttribute", [p, i32, p, ctypes.c_size_t]),
                           ("cublasLtMatmulDescDestroy", [p]),
                           ("cublasLtMatmulPreferenceCreate", [ctypes.POINTER(p)]),
                           ("cublasLtMatmulPreferenceSetAttribute", [p, i32, p, ctypes.c_size_t]),
                           ("cublasLtMatmulPreferenceDestroy", [p]),
                           ("cublasLtMatmulAlgoGetHeuristic", [p, p, p, p, p, p, p, i32,
                                                               ctypes.POINTER(_HeuristicResult), ctypes.POINTER(i32)]),
                           ("cublasLtMatmul", [p, p, p, p, p, p, p, p, p, p, p, p, p, p, ctypes.c_size_t, p])):
            fn = getattr(lib, name)
            fn.argtypes, fn.restype = args, ctypes.c_int

    @staticmethod
    def _check(status, what):
        if status != 0:
            raise RuntimeError(f"cublaslt_gemm: {what} failed with cuBLAS status {status}")

    def get_handle(self):  # created at the first GEMM: cublasLtCreate needs a GPU
        with self.lock:
            if self.handle is None:
                handle = ctypes.c_void_p()
                self._check(self.lib.cublasLtCreate(ctypes.byref(handle)), "cublasLtCreate")
                self.handle = handle
        return self.handle

    def workspace(self, torch, device):
        if device not in self.workspaces:
            self.workspaces[device] = torch.empty(_WORKSPACE_BYTES, dtype=torch.uint8, device=device)
        return self.workspaces[device]


_library = _Library()


def _set(setter, obj, attribute, value):
    _Library._check(setter(obj, attribute, ctypes.byref(value), ctypes.sizeof(value)), setter.__name__)


def cublaslt_layouts(m, n, k, a_strides, b_strides, d_stride):
    """The cuBLASLt problem (column-major) of D[M, N] = A[M, K] @ B[N, K]^T with these strides (elements): cuBLASLt
    computes D^T[N, M] = B[N, K] A^T, so its A is our B and its B our A. Returns (trans_a, trans_b, layout of its A,
    of its B, of D), each layout (rows, cols, leading dimension), as DeepGEMM's cublaslt_gemm. Pure arithmetic."""
    a_k_major, b_k_major = a_strides[1] == 1, b_strides[1] == 1
    trans_a = _CUBLAS_OP_T if b_k_major else _CUBLAS_OP_N
    trans_b = _CUBLAS_OP_N if a_k_major else _CUBLAS_OP_T
    layout_a = (k, n, b_strides[0]) if b_k_major else (n, k, b_strides[1])
    layout_b = (k, m, a_strides[0]) if a_k_major else (m, k, a_strides[1])
    return trans_a, trans_b, layout_a, layout_b, (n, m, d_stride)


def _check_operand(name, t, torch):
    if not isinstance(t, torch.Tensor):
        raise _C.HopgemmTypeError(f"cublaslt_gemm: {name} must be a torch tensor, not {type(t).__name__}")
    if t.dim() != 2:
        raise _C.HopgemmValueError(f"cublaslt_gemm: {name} must be 2-D, got shape {tuple(t.shape)}")


def _major_ab(name, t):
    # DeepGEMM's get_major_type_ab: one of the two dimensions contiguous (K-major or MN-major).
    if t.stride(1) != 1 and t.stride(0) != 1:
        raise _C.HopgemmValueError(f"cublaslt_gemm: {name} needs a contiguous dimension, got strides {t.stride()}")


def cublaslt_gemm_nt(a: Tensor, b: Tensor, d: Tensor, c: Optional[Tensor] = None) -> None:
    """D[M, N] = A[M, K] @ B[N, K]^T (+ C), by cuBLASLt with DeepGEMM's settings (see the module's documentation).
    A and B may each be K-major or MN-major (any of the four layouts); D (and C) row-major, BF16 or FP32."""
    torch = sys.modules.get("torch")
    if torch is None:
        raise _C.HopgemmTypeError("cublaslt_gemm: takes torch tensors (import torch first)")
    for name, t in (("a", a), ("b", b), ("d", d)) + ((("c", c),) if c is not None else ()):
        _check_operand(name, t, torch)
    (m, k), (n, k_), (m_, n_) = a.shape, b.shape, d.shape
    if (m, n, k) != (m_, n_, k_):
        raise _C.HopgemmValueError(f"cublaslt_gemm: shapes do not match: a {tuple(a.shape)}, b {tuple(b.shape)}, "
                                   f"d {tuple(d.shape)} (D[M, N] = A[M, K] @ B[N, K]^T)")
    _major_ab("a", a)
    _major_ab("b", b)
    if a.dtype != b.dtype or str(a.dtype).replace("torch.", "") not in _CUDA_TYPES:
        raise _C.HopgemmTypeError(f"cublaslt_gemm: a and b must have one type of {sorted(_CUDA_TYPES)}, "
                                  f"got {a.dtype} and {b.dtype}")
    if d.dtype not in (torch.bfloat16, torch.float32):
        raise _C.HopgemmTypeError(f"cublaslt_gemm: d must be bfloat16 or float32, not {d.dtype}")
    if d.stride(1) != 1:
        raise _C.HopgemmValueError(f"cublaslt_gemm: d must be row-major, got strides {d.stride()}")
    if c is not None:
        if c.dtype != d.dtype or c.stride(1) != 1:
            raise _C.HopgemmValueError(f"cublaslt_gemm: c must be row-major and of d's type, got {c.dtype} with "
                                       f"strides {c.stride()}")
        if c.shape != d.shape or (c.data_ptr() == d.data_ptr() and c.stride() != d.stride()):
            raise _C.HopgemmValueError(f"cublaslt_gemm: c must have d's shape {tuple(d.shape)} (and its strides "
                                       f"where it aliases d), got {tuple(c.shape)} with strides {c.stride()}")
    for name, t in (("a", a), ("b", b), ("d", d)) + ((("c", c),) if c is not None else ()):
        if t.device != d.device or t.device.type != "cuda":
            raise _C.HopgemmValueError(f"cublaslt_gemm: {name} must be on d's CUDA device, not {t.device}")
    if m == 0 or n == 0:
        return
    # DeepGEMM's early_return: K = 0 writes C or zeros; C distinct from D is copied into D first.
    same = c is not None and c.data_ptr() == d.data_ptr()
    if k == 0:
        if not same:
            d.copy_(c) if c is not None else d.zero_()
        return
    if c is not None and not same:
        d.copy_(c)

    lib = _library.open()
    in_type, out_type = _CUDA_TYPES[str(a.dtype).replace("torch.", "")], _CUDA_TYPES[str(d.dtype).replace("torch.", "")]
    device = d.device
    num_sms = torch.cuda.get_device_properties(device).multi_processor_count
    workspace = lib.workspace(torch, device)
    with _Matmul(lib, m, n, k, a.stride(), b.stride(), d.stride(0), in_type, out_type, num_sms) as op:
        handle = lib.get_handle()
        heuristic, found = _HeuristicResult(), ctypes.c_int(0)
        lib._check(lib.lib.cublasLtMatmulAlgoGetHeuristic(handle, op.desc, op.layouts[0], op.layouts[1],
                                                          op.layouts[2], op.layouts[2], op.pref, 1,
                                                          ctypes.byref(heuristic), ctypes.byref(found)),
                   "cublasLtMatmulAlgoGetHeuristic")
        if found.value != 1:
            raise RuntimeError(f"cublaslt_gemm: cuBLASLt has no algorithm for {a.dtype} -> {d.dtype} with these "
                               f"layouts (m={m}, n={n}, k={k})")
        alpha, beta = ctypes.c_float(1.0), ctypes.c_float(1.0 if c is not None else 0.0)
        stream = torch.cuda.current_stream(device).cuda_stream
        # cuBLASLt's A is our B and its B our A (column-major D^T = B A^T).
        lib._check(lib.lib.cublasLtMatmul(handle, op.desc, ctypes.byref(alpha), ctypes.c_void_p(b.data_ptr()),
                                          op.layouts[0], ctypes.c_void_p(a.data_ptr()), op.layouts[1],
                                          ctypes.byref(beta), ctypes.c_void_p(d.data_ptr()), op.layouts[2],
                                          ctypes.c_void_p(d.data_ptr()), op.layouts[2], ctypes.byref(heuristic),
                                          ctypes.c_void_p(workspace.data_ptr()), _WORKSPACE_BYTES,
                                          ctypes.c_void_p(stream)),
                   "cublasLtMatmul")


class _Matmul:
    """The descriptors of one cuBLASLt matmul with DeepGEMM's settings (layouts, operation, preference), destroyed
    on exit. Creating them needs no GPU."""

    def __init__(self, lib, m, n, k, a_strides, b_strides, d_stride, in_type, out_type, num_sms):
        self.lib, self.layouts, self.desc, self.pref = lib, [], ctypes.c_void_p(), ctypes.c_void_p()
        try:
            self._create(m, n, k, a_strides, b_strides, d_stride, in_type, out_type, num_sms)
        except BaseException:
            self.__exit__()
            raise

    def _create(self, m, n, k, a_strides, b_strides, d_stride, in_type, out_type, num_sms):
        lib, cu = self.lib, self.lib.lib
        trans_a, trans_b, shape_a, shape_b, shape_d = cublaslt_layouts(m, n, k, a_strides, b_strides, d_stride)
        for (rows, cols, ld), dtype in ((shape_a, in_type), (shape_b, in_type), (shape_d, out_type)):
            layout = ctypes.c_void_p()
            lib._check(cu.cublasLtMatrixLayoutCreate(ctypes.byref(layout), dtype, rows, cols, ld),
                       "cublasLtMatrixLayoutCreate")
            self.layouts.append(layout)
        lib._check(cu.cublasLtMatmulDescCreate(ctypes.byref(self.desc), _CUBLAS_COMPUTE_32F_FAST_TF32, _CUDA_R_32F),
                   "cublasLtMatmulDescCreate")
        setter = cu.cublasLtMatmulDescSetAttribute
        _set(setter, self.desc, _DESC_TRANSA, ctypes.c_int(trans_a))
        _set(setter, self.desc, _DESC_TRANSB, ctypes.c_int(trans_b))
        _set(setter, self.desc, _DESC_SCALE_TYPE, ctypes.c_int(_CUDA_R_32F))
        _set(setter, self.desc, _DESC_SM_COUNT_TARGET, ctypes.c_int(num_sms))
        if in_type in (_CUDA_TYPES["float8_e4m3fn"], _CUDA_TYPES["float8_e5m2"]):
            _set(setter, self.desc, _DESC_FAST_ACCUM, ctypes.c_int8(0))  # FP8: FP32 accumulation throughout
        lib._check(cu.cublasLtMatmulPreferenceCreate(ctypes.byref(self.pref)), "cublasLtMatmulPreferenceCreate")
        _set(cu.cublasLtMatmulPreferenceSetAttribute, self.pref, _PREF_MAX_WORKSPACE_BYTES,
             ctypes.c_uint64(_WORKSPACE_BYTES))
        _set(cu.cublasLtMatmulPreferenceSetAttribute, self.pref, _PREF_REDUCTION_SCHEME_MASK,
             ctypes.c_uint32(_REDUCTION_SCHEME_NONE | _REDUCTION_SCHEME_COMPUTE_TYPE))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        cu = self.lib.lib
        if self.pref:
            cu.cublasLtMatmulPreferenceDestroy(self.pref)
        for layout in self.layouts:
            cu.cublasLtMatrixLayoutDestroy(layout)
        if self.desc:
            cu.cublasLtMatmulDescDestroy(self.desc)
        self.layouts, self.desc, self.pref = [], ctypes.c_void_p(), ctypes.c_void_p()


def cublaslt_gemm_nn(a: Tensor, b: Tensor, d: Tensor, c: Optional[Tensor] = None) -> None:
    """D[M, N] = A[M, K] @ B[K, N] (+ C) by cuBLASLt (cublaslt_gemm_nt of B's transpose)."""
    cublaslt_gemm_nt(a, _transpose(b), d, c)


def cublaslt_gemm_tn(a: Tensor, b: Tensor, d: Tensor, c: Optional[Tensor] = None) -> None:
    """D[M, N] = A[K, M]^T @ B[K, N] (+ C) by cuBLASLt (cublaslt_gemm_nt of both transposes)."""
    cublaslt_gemm_nt(_transpose(a), _transpose(b), d, c)


def cublaslt_gemm_tt(a: Tensor, b: Tensor, d: Tensor, c: Optional[Tensor] = None) -> None:
    """D[M, N] = A[K, M]^T @ B[N, K]^T (+ C) by cuBLASLt (cublaslt_gemm_nt of A's transpose)."""
    cublaslt_gemm_nt(_transpose(a), b, d, c)


def _transpose(t):
    if not hasattr(t, "transpose"):
        raise _C.HopgemmTypeError(f"cublaslt_gemm: takes torch tensors, not {type(t).__name__}")
    if t.dim() != 2:
        raise _C.HopgemmValueError(f"cublaslt_gemm: operands must be 2-D, got shape {tuple(t.shape)}")
    return t.transpose(0, 1)
