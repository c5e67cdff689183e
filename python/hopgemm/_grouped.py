"""The MoE grouped FP8 and BF16 GEMMs with deep_gemm's signatures, declared once (hopgemm/_ops.py): the public functions over
the extension, which help() shows with their parameters and torch.compile traces (hopgemm/_dispatch.py), and their
torch ops (hopgemm/_torch_ops.py)."""
from . import _C, _dispatch, _ops
from ._ops import Arg

__all__ = ["m_grouped_fp8_gemm_nt_contiguous", "m_grouped_fp8_gemm_nn_contiguous", "m_grouped_fp8_gemm_nt_masked",
           "k_grouped_fp8_gemm_nt_contiguous", "k_grouped_fp8_gemm_tn_contiguous",
           "m_grouped_bf16_gemm_nt_contiguous", "m_grouped_bf16_gemm_nn_contiguous", "m_grouped_bf16_gemm_nt_masked",
           "k_grouped_bf16_gemm_tn_contiguous"]

_ERRORS = """
Raises ValueError for invalid arguments (the keyword combinations above before any tensor is looked at),
NotImplementedError for unsupported combinations, RuntimeError for JIT and CUDA failures."""

_M_GROUPED_DOC = """

a=(A, sfa), b=(B, sfb): FP8 e4m3 data, K-major, with FP32 scale factors, recipe (1, 128, 128): sfa per 1x128 of A,
sfb per 128x128 block of each B[g], [G, ceil(N/128), ceil(K/128)]. sfa and sfb may be row-major (as the quantisers
return them) or MN-major TMA-aligned. d (BF16) is written in place; nothing is returned. recipe=None means
(1, 128, 128); recipe_a / recipe_b: per-operand (gran_mn, gran_k), instead of recipe. compiled_dims and
disable_ue8m0_cast are accepted for deep_gemm compatibility and change nothing on SM90. stream: None (torch's current
stream of the tensors' device, or the default stream), an int cudaStream_t, a torch.cuda.Stream, or any object with
__cuda_stream__."""

_CONTIGUOUS_DOC = """

grouped_layout (int32 on the device) says which rows of A [M_sum, K] and d [M_sum, N] belong to which group:
* default: [M_sum], the group of each row, -1 for padding rows. Every group starts at a multiple of
  get_mk_alignment_for_contiguous_layout() (128 unless set_mk_alignment_for_contiguous_layout changed it). Only the
  first row of each tile (64 or 128 rows, dividing the alignment) is read: a tile marked -1 is never computed (no
  loads, no MMA) and its d rows receive zeros, as DeepGEMM writes them (zero_padding_blocks=False, hopgemm only:
  left untouched); padding rows inside a group's last tile receive their (padding) A rows @ B[g]^T.
* use_psum_layout=True: [G], the cumulative (unaligned) row ends; group g starts at the end of group g-1 rounded up
  to the alignment. The d rows between a group's end and the next group's start are left untouched.
* use_packed_layout=True (hopgemm only): [G], the cumulative row ends, group g starting exactly where g-1 ends (no
  padding: tokens merely sorted by expert).
m_indices is deep_gemm's older name for grouped_layout: give exactly one of them. expected_m_for_psum_layout: the
expected rows per group, a hint for the heuristics, with use_psum_layout or use_packed_layout only (default
M_sum / G). ensure_zero_padding is accepted for deep_gemm compatibility (it acts on SM100 only there)."""


# The (tensor, scales) pairs and d, as every grouped op takes them.
def _operands():
    return [
        Arg("a", "Tuple[Tensor, Tensor]", torch="Tensor", pair=("a", "sfa")),
        Arg("b", "Tuple[Tensor, Tensor]", torch="Tensor", pair=("b", "sfb")),
        Arg("d", "Tensor", torch="Tensor"),
    ]


def _recipes():
    return [Arg(name, "Optional[Sequence[int]]", None, torch="Optional[List[int]]")
            for name in ("recipe", "recipe_a", "recipe_b")]


def _declare(name, args, doc, prologue=""):
    return _ops.declare(_ops.Op(name, args, doc, prologue), _C, _dispatch)


def _m_grouped_contiguous(name, summary):
    args = _operands() + [Arg("grouped_layout", "Optional[Tensor]", None, torch="Optional[Tensor]")] + _recipes() + [
        Arg("compiled_dims", "str", "nk"),
        Arg("disable_ue8m0_cast", "bool", False),
        Arg("use_psum_layout", "bool", False, torch="bool"),
        Arg("ensure_zero_padding", "bool", True),
        Arg("expected_m_for_psum_layout", "Optional[int]", None, torch="Optional[int]"),
        Arg("m_indices", "Optional[Tensor]", None, kw_only=True, torch="Optional[Tensor]"),
        Arg("use_packed_layout", "bool", False, kw_only=True, torch="bool"),
        Arg("zero_padding_blocks", "bool", True, kw_only=True, torch="bool"),
        Arg("stream", "Any", None, kw_only=True),
    ]
    return _declare(name, args, summary + _CONTIGUOUS_DOC + _M_GROUPED_DOC + _ERRORS)


m_grouped_fp8_gemm_nt_contiguous = _m_grouped_contiguous(
    "m_grouped_fp8_gemm_nt_contiguous",
    "MoE M-grouped GEMM over stacked groups of rows: D[rows of g] = A[rows of g] @ B[g]^T with A [M_sum, K], "
    "B [G, N, K], d [M_sum, N] BF16, sfa [M_sum, ceil(K/128)].")
m_grouped_fp8_gemm_nn_contiguous = _m_grouped_contiguous(
    "m_grouped_fp8_gemm_nn_contiguous",
    "m_grouped_fp8_gemm_nt_contiguous with B given as [G, K, N] (a transposed view of a K-major [G, N, K], and sfb "
    "the transposed view of its [G, ceil(N/128), ceil(K/128)] scales).")

m_grouped_fp8_gemm_nt_masked = _declare(
    "m_grouped_fp8_gemm_nt_masked",
    _operands() + [Arg("masked_m", "Tensor", torch="Tensor"), Arg("expected_m", "int", torch="int")] + _recipes() + [
        Arg("compiled_dims", "str", "nk"),
        Arg("disable_ue8m0_cast", "bool", False),
        Arg("stream", "Any", None, kw_only=True),
    ], """\
MoE M-grouped GEMM over one padded slab per group (decode): d[g, :m_g] = A[g, :m_g] @ B[g]^T with A [G, M_max, K],
B [G, N, K], d [G, M_max, N] BF16, sfa [G, M_max, ceil(K/128)].

masked_m (int32 [G] on the device) gives m_g = min(max(masked_m[g], 0), M_max), read by the kernel: no host sync, and
a CUDA graph replays correctly when masked_m changes. Exactly rows [0, m_g) of each d[g] are written; every other row
of d is left untouched. expected_m > 0, the typical m_g, steers the heuristics only.""" + _M_GROUPED_DOC + _ERRORS)

# hopgemm's older keyword names (ks, ks_tensor) of deep_gemm HEAD's ks_cpu and grouped_layout, folded into the
# extension's arguments (ks, ks_tensor).
_K_GROUPED_PROLOGUE = """\
if ks is not None:
    if ks_cpu is not None:
        raise _C.HopgemmValueError(f"{NAME}: pass ks_cpu or ks, not both")
    ks_cpu = ks
if ks_tensor is not None:
    if grouped_layout is not None:
        raise _C.HopgemmValueError(f"{NAME}: pass grouped_layout or ks_tensor, not both")
    grouped_layout = ks_tensor
if grouped_layout is None:
    raise _C.HopgemmValueError(f"{NAME}: argument 'grouped_layout' (hopgemm's older name: ks_tensor) is "
                               "required: int32 [G] on the device")
ks, ks_tensor = ks_cpu, grouped_layout"""


def _k_grouped(name, summary):
    args = _operands() + [
        Arg("ks_cpu", "Optional[Sequence[int]]", None, binding="ks", torch="List[int]", torch_default=False),
        Arg("grouped_layout", "Optional[Tensor]", None, binding="ks_tensor", torch="Tensor", torch_default=False),
        Arg("c", "Optional[Tensor]", None, torch="Optional[Tensor]", torch_default=False),
        Arg("recipe", "Sequence[int]", (1, 1, 128), torch="List[int]", torch_default=False),
        Arg("compiled_dims", "str", "mn"),
        Arg("use_psum_layout", "bool", False, torch="bool"),
        Arg("ks", "Optional[Sequence[int]]", None, kw_only=True, alias=True),
        Arg("ks_tensor", "Optional[Tensor]", None, kw_only=True, alias=True),
        Arg("stream", "Any", None, kw_only=True),
    ]
    return _declare(name, args, summary + """

ks_cpu (or hopgemm's older keyword ks): each group's K, a list of ints on the host, multiples of 128 (0 allowed:
D[g] = C[g]); None is refused with ValueError. grouped_layout (or hopgemm's older keyword ks_tensor): the same values
as int32 [G] on the device. a=(A, sfa): FP8 e4m3
holding sum(ks) * M elements, group g at [off_g * M, (off_g + k_g) * M) as a K-major [M, k_g] matrix
(off_g = k_0 + ... + k_{g-1}); b=(B, sfb) likewise with N. sfa [M, sum(ks) / 128] and sfb [N, sum(ks) / 128] FP32
per 1x128, MN-major TMA-aligned: strides (1, align(M, 4)), as deep_gemm passes them (sf.T of a [sum(ks) / 128, M]
tensor) and get_mn_major_tma_aligned_tensor returns them. d [G, M, N] FP32 contiguous, written in place; c: None
(D[g] = A_g @ B_g^T), d itself (accumulate) or another contiguous [G, M, N] FP32 tensor (copied into d first).
recipe must be (1, 1, 128). use_psum_layout=True raises NotImplementedError (as deep_gemm does on SM90).
compiled_dims is accepted for deep_gemm compatibility. stream: as for the other GEMMs (None: torch's current
stream).""" + _ERRORS, _K_GROUPED_PROLOGUE.replace("{NAME}", name))


k_grouped_fp8_gemm_nt_contiguous = _k_grouped(
    "k_grouped_fp8_gemm_nt_contiguous",
    "MoE K-grouped GEMM (weight gradients): D[g] = C[g] + A_g @ B_g^T in FP32, g = 0..G-1, A_g [M, k_g] and "
    "B_g [N, k_g] K-major.")
k_grouped_fp8_gemm_tn_contiguous = _k_grouped(
    "k_grouped_fp8_gemm_tn_contiguous",
    "k_grouped_fp8_gemm_nt_contiguous with MN-major A and B: always NotImplementedError on SM90, whose FP8 tensor "
    "cores read K-major operands only (deep_gemm has it on SM100). Use k_grouped_fp8_gemm_nt_contiguous.")


# ---- BF16 (no scales): the FP8 M-grouped ops' declarations with a and b plain tensors, without the recipes and the
# UE8M0 switch.
_BF16_STREAM_DOC = """
compiled_dims is accepted for deep_gemm compatibility. stream: None (torch's current stream of the tensors' device, or
the default stream), an int cudaStream_t, a torch.cuda.Stream, or any object with __cuda_stream__."""
_BF16_M_GROUPED_DOC = """

a and b: BF16, K-major (B [G, N, K] with its groups stacked densely along N); d (BF16) is written in place; nothing
is returned. K a multiple of 8.""" + _BF16_STREAM_DOC
_BF16_CONTIGUOUS_OPERANDS_DOC = """

a: BF16 K-major. b: BF16, its major read from its strides as deep_gemm reads it, both read in place: K-major
(stride(-1) == 1, groups stacked densely along N) or MN-major (N contiguous, e.g. b.mT of a contiguous [G, K, N]; K
and group strides multiples of 16 bytes). The nn form takes B as [G, K, N] and runs the nt form on its transpose, as
deep_gemm's: a contiguous [G, K, N] is an MN-major B. d (BF16) is written in place; nothing is returned. K a multiple
of 8.""" + _BF16_STREAM_DOC


def _bf16(op, name, summary, doc, operands_doc=_BF16_M_GROUPED_DOC):
    plain = {arg: Arg(arg, "Tensor", torch="Tensor") for arg in ("a", "b")}
    args = [plain.get(arg.name, arg) for arg in op.args if not arg.name.startswith(("recipe", "disable_ue8m0"))]
    return _declare(name, args, summary + doc + operands_doc + _ERRORS, op.prologue.replace(op.name, name))


m_grouped_bf16_gemm_nt_contiguous = _bf16(
    _ops.OPS["m_grouped_fp8_gemm_nt_contiguous"], "m_grouped_bf16_gemm_nt_contiguous",
    "MoE M-grouped BF16 GEMM over stacked groups of rows: D[rows of g] = A[rows of g] @ B[g]^T with A [M_sum, K], "
    "B [G, N, K], d [M_sum, N] BF16.", _CONTIGUOUS_DOC, _BF16_CONTIGUOUS_OPERANDS_DOC)
m_grouped_bf16_gemm_nn_contiguous = _bf16(
    _ops.OPS["m_grouped_fp8_gemm_nn_contiguous"], "m_grouped_bf16_gemm_nn_contiguous",
    "m_grouped_bf16_gemm_nt_contiguous with B given as [G, K, N] (contiguous: an MN-major B; or the transposed view of "
    "a K-major [G, N, K]).", _CONTIGUOUS_DOC, _BF16_CONTIGUOUS_OPERANDS_DOC)
m_grouped_bf16_gemm_nt_masked = _bf16(
    _ops.OPS["m_grouped_fp8_gemm_nt_masked"], "m_grouped_bf16_gemm_nt_masked",
    "MoE M-grouped BF16 GEMM over one padded slab per group (decode): d[g, :m_g] = A[g, :m_g] @ B[g]^T with "
    "A [G, M_max, K], B [G, N, K], d [G, M_max, N] BF16, m_g = min(max(masked_m[g], 0), M_max) read by the kernel "
    "(no host sync; CUDA graphs replay correctly when masked_m changes); other rows of d untouched; expected_m > 0 "
    "steers the heuristics only.", "")
k_grouped_bf16_gemm_tn_contiguous = _bf16(
    _ops.OPS["k_grouped_fp8_gemm_tn_contiguous"], "k_grouped_bf16_gemm_tn_contiguous",
    "MoE K-grouped BF16 GEMM (weight gradients): D[g] = C[g] + A_g @ B_g^T in FP32, g = 0..G-1.", """

a [sum(ks), M] and b [sum(ks), N]: BF16 with rows contiguous (MN-major operands, read as they are; row strides
multiples of 8 elements), group g the rows [off_g, off_g + k_g) of both (off_g = k_0 + ... + k_{g-1}). ks_cpu (or
hopgemm's older keyword ks): each group's K, a list of ints on the host, multiples of 64 (0 allowed: D[g] = C[g]);
None is refused with ValueError. grouped_layout (or hopgemm's older keyword ks_tensor): the same values as int32 [G] on
the device. d [G, M, N] FP32 contiguous, written in place; c: None (D[g] = A_g @ B_g^T), d itself (accumulate) or
another contiguous [G, M, N] FP32 tensor (copied into d first). use_psum_layout=True raises NotImplementedError (as
deep_gemm does on SM90). compiled_dims is accepted for deep_gemm compatibility. stream: as for the other GEMMs.""", "")
