"""Scale-factor layout utilities with deep_gemm's names and semantics.

The kernels are in the C++ library; this module allocates their outputs like the input."""
from __future__ import annotations

from typing import Optional, Sequence

from . import _C, _dispatch
from ._tensors import Tensor, empty, empty_strided, shape_of

get_tma_aligned_size = _C.get_tma_aligned_size
get_mk_alignment_for_contiguous_layout = _C.get_mk_alignment_for_contiguous_layout
get_m_alignment_for_contiguous_layout = get_mk_alignment_for_contiguous_layout
get_k_alignment_for_contiguous_layout = get_mk_alignment_for_contiguous_layout

__all__ = [
    "get_tma_aligned_size",
    "get_mk_alignment_for_contiguous_layout",
    "get_m_alignment_for_contiguous_layout",
    "get_k_alignment_for_contiguous_layout",
    "get_theoretical_mk_alignment_for_contiguous_layout",
    "get_mn_major_tma_aligned_tensor",
    "get_mn_major_tma_aligned_packed_ue8m0_tensor",
    "get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor",
    "transform_sf_into_required_layout",
]


def _ceil_div(x, y):
    return (x + y - 1) // y


def get_theoretical_mk_alignment_for_contiguous_layout(expected_m: Optional[int] = None) -> int:
    """deep_gemm's M-grouped contiguous alignment for an expected group size; on SM90 it is always
    get_mk_alignment_for_contiguous_layout() (the kernels' BLOCK_M)."""
    return get_mk_alignment_for_contiguous_layout()


def get_mn_major_tma_aligned_tensor(sf: Tensor) -> Tensor:
    """FP32 scale factors [mn, sf_k] or [G, mn, sf_k] in the MN-major TMA-aligned layout: strides
    (1, tma_mn) (and tma_mn * sf_k for G), tma_mn = get_tma_aligned_size(mn, 4). Returns `sf` itself when
    it already has that layout, else a new tensor of the same framework and device (under torch.compile: always
    a new tensor, as torch.ops.hopgemm.get_mn_major_tma_aligned_tensor returns)."""
    if _dispatch.is_compiling():
        return _dispatch.ops.get_mn_major_tma_aligned_tensor(sf)
    if _C.is_mn_major_tma_aligned(sf):
        return sf
    return relayout_mn_major_tma_aligned(sf)


def relayout_mn_major_tma_aligned(sf: Tensor) -> Tensor:
    """A new tensor holding `sf` in the MN-major TMA-aligned layout (the kernel, without the dispatch and the
    early return of get_mn_major_tma_aligned_tensor)."""
    shape = shape_of(sf)
    out = empty_strided(sf, shape, _C.mn_major_tma_aligned_strides(shape, 4), "float32", "sf")
    _C.get_mn_major_tma_aligned_tensor(sf, out)
    return out


def get_mn_major_tma_aligned_packed_ue8m0_tensor(sf: Tensor, psum_layout: Optional[Tensor] = None) -> Tensor:
    """FP32 scale factors [mn, sf_k] (or [G, mn, sf_k]) -> UE8M0 exponents packed 4 per int32 along K:
    int32 [mn, ceil(sf_k / 4)] (or [G, ...]) in the MN-major TMA-aligned layout (DeepGEMM's SM100 format).
    Each scale keeps only its exponent (exact for the power-of-two scales that use_ue8m0 quantisers make).
    psum_layout (int32 [G] cumulative row ends of an M-grouped psum layout, sf 2-D): DeepGEMM's kernel then skips
    the gap rows between groups; here every row is packed alike, so the groups' rows are the same and the gap rows
    (which no GEMM reads) hold the packed bits of whatever the gaps of sf held."""
    shape = shape_of(sf)
    out_shape = shape[:-1] + (_ceil_div(shape[-1], 4),) if shape else shape
    if len(out_shape) not in (2, 3):
        raise _C.HopgemmValueError(f"get_mn_major_tma_aligned_packed_ue8m0_tensor: argument 'sf' must be [mn, sf_k] "
                                   f"or [G, mn, sf_k], got shape {list(shape)}")
    if psum_layout is not None:
        _check_group_table("get_mn_major_tma_aligned_packed_ue8m0_tensor", "psum_layout", psum_layout, None)
        if len(shape) != 2:
            raise _C.HopgemmValueError("get_mn_major_tma_aligned_packed_ue8m0_tensor: with psum_layout, argument 'sf' "
                                       f"must be 2-D [mn, sf_k], got shape {list(shape)}")
    out = empty_strided(sf, out_shape, _C.mn_major_tma_aligned_strides(out_shape, 4), "int32", "sf")
    _C.get_mn_major_tma_aligned_packed_ue8m0_tensor(sf, out)
    return out


def _check_group_table(op, name, table, num_groups):
    """A group table argument (DeepGEMM's grouped_layout / psum_layout): a 1-D tensor of `num_groups` entries (any
    length when None); its values are not read on the host."""
    shape = shape_of(table, name)
    if len(shape) != 1 or (num_groups is not None and shape[0] != num_groups):
        want = "1-D" if num_groups is None else f"[{num_groups}] (one entry per group of ks_cpu)"
        raise _C.HopgemmValueError(f"{op}: argument '{name}' must be {want}, got shape {list(shape)}")


def get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor(sf: Tensor, grouped_layout: Tensor,
                                                           ks_cpu: Optional[Sequence[int]], gran_k: int,
                                                           k_alignment: int, use_psum_layout: bool = False) -> Tensor:
    """K-grouped variant (MoE weight gradients): sf FP32 [sum_g ceil(ks_cpu[g] / gran_k), mn], the per-channel scales
    of the groups stacked along K -> int32 [sum_g ceil(ks_cpu[g] / (4 gran_k)), mn], UE8M0 exponents packed 4 per
    int32 along K within each group (never across two). gran_k: 32 or 128, the K elements per scale. grouped_layout
    (the groups' K as int32 [G] on the device, as DeepGEMM takes it) is checked for its length, not read.
    k_alignment (a multiple of 32) and use_psum_layout=True belong to DeepGEMM's SM100 psum layout:
    use_psum_layout=True raises NotImplementedError (the SM90 K-grouped GEMMs take no psum layout)."""
    op = "get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor"
    if use_psum_layout:
        raise NotImplementedError(f"{op}: use_psum_layout=True is DeepGEMM's SM100 K-grouped psum layout; the SM90 "
                                  "K-grouped GEMMs take no psum layout")
    if gran_k not in (32, 128):
        raise _C.HopgemmValueError(f"{op}: gran_k must be 32 or 128, got {gran_k}")
    if k_alignment <= 0 or k_alignment % 32 != 0:
        raise _C.HopgemmValueError(f"{op}: k_alignment must be a positive multiple of 32, got {k_alignment}")
    if not ks_cpu:
        raise _C.HopgemmValueError(f"{op}: argument 'ks_cpu' must list each group's K (None or [] is DeepGEMM's "
                                   "SM100 psum path)")
    ks = [int(k) for k in ks_cpu]
    _check_group_table(op, "grouped_layout", grouped_layout, len(ks))
    shape = shape_of(sf)
    if len(shape) != 2:
        raise _C.HopgemmValueError(f"{op}: argument 'sf' must be [sum_sf_k, mn], got shape {list(shape)}")
    # The kernel packs per group ceil(rows / 4) output rows from `rows` scale rows, rows = ceil(k / 128) for the k it
    # is given: a group of k elements at gran_k has ceil(k / gran_k) scale rows, which k' = ceil(k / gran_k) * 128
    # gives (and its ceil(k / (4 gran_k)) packed rows, as DeepGEMM's).
    scaled = [_ceil_div(k, gran_k) * 128 if k > 0 else k for k in ks]
    out = empty(sf, (sum(_ceil_div(k, 4 * gran_k) for k in ks if k > 0), shape[1]), "int32", "sf")
    _C.get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor(sf, scaled, out)
    return out


def transform_sf_into_required_layout(sf: Tensor, mn: int, k: int, recipe: Sequence[int],
                                      num_groups: Optional[int] = None, is_sfa: Optional[bool] = None,
                                      disable_ue8m0_cast: bool = False, psum_layout: Optional[Tensor] = None) -> Tensor:
    """Scale factors in the layout the SM90 kernels read (deep_gemm semantics):

    * recipe (1, 1, 128) for `sf` of A (or (1, 128) as gran_mn, gran_k): per-row FP32 scales
      [(G,) mn, ceil(k / 128)] -> get_mn_major_tma_aligned_tensor(sf);
    * 128 x 128 blocks: FP32 [(G,) ceil(mn / 128), ceil(k / 128)], returned as is; it must be contiguous,
      K-major or MN-major.

    `recipe` is (gran_m, gran_n, gran_k) with `is_sfa` saying which of gran_m / gran_n applies, or
    (gran_mn, gran_k). SM90 consumes FP32 scales only, so `disable_ue8m0_cast` has no effect; `psum_layout` only
    steers DeepGEMM's SM100 UE8M0 packing and has none either."""
    op = "transform_sf_into_required_layout"
    recipe = tuple(int(r) for r in recipe)
    if len(recipe) == 3:
        if is_sfa is None:
            raise _C.HopgemmValueError(f"{op}: a 3-element recipe needs is_sfa=True or False")
        gran_mn, gran_k = (recipe[0] if is_sfa else recipe[1]), recipe[2]
    elif len(recipe) == 2:
        gran_mn, gran_k = recipe
    else:
        raise _C.HopgemmValueError(f"{op}: recipe must be (gran_m, gran_n, gran_k) or (gran_mn, gran_k), got {recipe}")

    needs_relayout = _C.plan_transform_sf_into_required_layout(
        sf, mn, k, gran_mn, gran_k, -1 if num_groups is None else num_groups)
    return get_mn_major_tma_aligned_tensor(sf) if needs_relayout else sf
