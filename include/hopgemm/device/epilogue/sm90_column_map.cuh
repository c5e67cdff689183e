#pragma once
// The epilogue's column map: the column of D at which a GEMM column lands, applied to each TMA store box's first
// column (epilogue/sm90_store_tile.cuh). Every GEMM stores column n at n (Sm90IdentityColumns, which adds nothing to
// the store: the kernels' SASS is the same as without the hook); fp8_gemm_nt_skip_head_mid stores heads of
// kLeft + kRight columns into D's heads of kLeft + kMid + kRight, skipping the middle kMid (DeepGEMM's
// EpilogueHeadSplits): n = h (kLeft + kRight) + j lands at h (kLeft + kMid + kRight) + j, plus kMid where j >= kLeft.
// A box must not straddle a head's parts: kLeft, kMid and kRight are multiples of its width (the config's rule).

#include "hopgemm/device/common.cuh"

namespace hopgemm::device::epilogue {

struct Sm90IdentityColumns {
  HOPGEMM_DEVICE static i32 map(i32 col) { return col; }
};

template <int kLeft, int kMid, int kRight>
struct Sm90HeadSplitColumns {
  static_assert(kLeft >= 0 && kMid > 0 && kRight >= 0 && kLeft + kRight > 0, "a head keeps some columns and skips some");
  HOPGEMM_DEVICE static i32 map(i32 col) { return col + (col + kRight) / (kLeft + kRight) * kMid; }
};

// The map of a config's head splits: none skipped (kMid == 0) is the identity.
template <int kLeft, int kMid, int kRight>
struct Sm90ColumnMapFor {
  using Type = Sm90HeadSplitColumns<kLeft, kMid, kRight>;
};
template <int kLeft, int kRight>
struct Sm90ColumnMapFor<kLeft, 0, kRight> {
  using Type = Sm90IdentityColumns;
};

}  // namespace hopgemm::device::epilogue
