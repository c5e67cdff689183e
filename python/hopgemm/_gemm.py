"""The dense FP8 and BF16 GEMMs with deep_gemm's signatures, declared once (hopgemm/_ops.py): the public functions over the
extension, which help() shows with their parameters and torch.compile traces (hopgemm/_dispatch.py), and their torch
ops (hopgemm/_torch_ops.py)."""
from . import _C, _dispatch, _ops
from ._ops import Arg

__all__ = ["fp8_gemm_nt", "fp8_gemm_nn", "fp8_gemm_tn", "fp8_gemm_tt", "fp8_gemm_nt_skip_head_mid",
           "bf16_gemm_nt", "bf16_gemm_nn", "bf16_gemm_tn", "bf16_gemm_tt"]

_COMMON_DOC = """

a=(A, sfa), b=(B, sfb): FP8 e4m3 data with FP32 scale factors; d [M, N] is written in place (nothing is returned).
recipe (gran_m, gran_n, gran_k): (1, 128, 128) scales A per 1x128 and B per 128x128 block, d BF16 (or FP32);
(1, 1, 128) scales both per 1x128, d FP32 (or BF16), with c to accumulate (c may be d itself). None infers it from
sfb's shape. recipe_a / recipe_b: per-operand (gran_mn, gran_k), instead of recipe. sfa and sfb may be row-major
(as the quantisers return them) or MN-major TMA-aligned. compiled_dims and disable_ue8m0_cast are accepted for
deep_gemm compatibility and change nothing on SM90. stream: None (torch's current stream of the tensors' device,
or the default stream), an int cudaStream_t, a torch.cuda.Stream, or any object with __cuda_stream__.
Raises ValueError for invalid arguments, NotImplementedError for unsupported combinations, RuntimeError for JIT
and CUDA failures."""


def _gemm_args(default_dims):
    """deep_gemm's arguments of the dense GEMMs; the torch op takes a, b (as two tensors each), d, c and the recipes."""
    return [
        Arg("a", "Tuple[Tensor, Tensor]", torch="Tensor", pair=("a", "sfa")),
        Arg("b", "Tuple[Tensor, Tensor]", torch="Tensor", pair=("b", "sfb")),
        Arg("d", "Tensor", torch="Tensor"),
        Arg("c", "Optional[Tensor]", None, torch="Optional[Tensor]"),
        Arg("recipe", "Optional[Sequence[int]]", None, torch="Optional[List[int]]"),
        Arg("recipe_a", "Optional[Sequence[int]]", None, torch="Optional[List[int]]"),
        Arg("recipe_b", "Optional[Sequence[int]]", None, torch="Optional[List[int]]"),
        Arg("compiled_dims", "str", default_dims),
        Arg("disable_ue8m0_cast", "bool", False),
        Arg("stream", "Any", None),
    ]


def _declare(name, default_dims, summary, args=_gemm_args, doc=_COMMON_DOC):
    return _ops.declare(_ops.Op(name, args(default_dims), summary + doc), _C, _dispatch)


fp8_gemm_nt = _declare("fp8_gemm_nt", "nk", "D = C + A @ B^T with A [M, K] and B [N, K], both K-major.")
fp8_gemm_nn = _declare("fp8_gemm_nn", "nk", "fp8_gemm_nt with B given as [K, N] (a transposed view of [N, K]).")
fp8_gemm_tn = _declare("fp8_gemm_tn", "mn", "fp8_gemm_nt with A given as [K, M] and B as [K, N] (transposed views).")
fp8_gemm_tt = _declare("fp8_gemm_tt", "mn", "fp8_gemm_nt with A given as [K, M] (a transposed view of [M, K]).")



def _skip_head_mid_args(default_dims):
    """DeepGEMM's arguments of fp8_gemm_nt_skip_head_mid: the dense GEMM's with head_splits in c's place and only the
    3-tuple recipe (its one recipe is (1, 128, 128))."""
    head_splits = Arg("head_splits", "Sequence[int]", torch="List[int]")
    return [head_splits if arg.name == "c" else arg for arg in _gemm_args(default_dims)
            if arg.name not in ("recipe_a", "recipe_b")]


fp8_gemm_nt_skip_head_mid = _declare(
    "fp8_gemm_nt_skip_head_mid", "nk",
    "fp8_gemm_nt with recipe (1, 128, 128) whose output columns are heads of left + right columns, stored into d's "
    "heads of left + mid + right columns around their middle `mid` columns, which are left untouched "
    "(head_splits = (left, mid, right); d [M, N / (left + right) * (left + mid + right)]). Each of left, mid and right "
    "is a multiple of 128 bytes of d (64 BF16 or 32 FP32 columns), N a multiple of left + right, K > 0.",
    _skip_head_mid_args)

_BF16_DOC = """

a, b: BF16 tensors, each K-major or MN-major as given (no copy is made: SM90's BF16 tensor cores read either layout);
d [M, N] BF16 or FP32 (rows contiguous) is written in place (nothing is returned); c (d's dtype) is added: c may be d
itself (accumulate in place) or a distinct tensor (copied into d first). Alignment: 16-byte aligned data, a K-major
operand's row stride and an MN-major one's K stride multiples of 8 elements, K a multiple of 8, N a multiple of 8
(BF16 d) or 4 (FP32 d); any M. compiled_dims is accepted for deep_gemm compatibility and changes nothing. stream:
None (torch's current stream of the tensors' device, or the default stream), an int cudaStream_t, a
torch.cuda.Stream, or any object with __cuda_stream__. Raises ValueError for invalid arguments, NotImplementedError
for unsupported combinations, RuntimeError for JIT and CUDA failures; a call that raises writes nothing."""


def _bf16_args(default_dims):
    """deep_gemm's arguments of the dense BF16 GEMMs: the FP8 ones with a and b plain tensors, without the recipes and
    the UE8M0 switch."""
    plain = {name: Arg(name, "Tensor", torch="Tensor") for name in ("a", "b")}
    return [plain.get(arg.name, arg) for arg in _gemm_args(default_dims)
            if not arg.name.startswith(("recipe", "disable_ue8m0"))]


def _declare_bf16(name, default_dims, summary):
    return _declare(name, default_dims, summary, _bf16_args, _BF16_DOC)


bf16_gemm_nt = _declare_bf16("bf16_gemm_nt", "nk", "D = C + A @ B^T with A [M, K] and B [N, K].")
bf16_gemm_nn = _declare_bf16("bf16_gemm_nn", "nk", "bf16_gemm_nt with B given as [K, N].")
bf16_gemm_tn = _declare_bf16("bf16_gemm_tn", "mn", "bf16_gemm_nt with A given as [K, M] and B as [K, N].")
bf16_gemm_tt = _declare_bf16("bf16_gemm_tt", "mn", "bf16_gemm_nt with A given as [K, M] and B as [N, K].")
