#pragma once
// Where a unit's FP8 scale factors are, from the scheduler's coordinates: the row of A's per-row scales (their TMA
// coordinate, or row-major row) and the scale column (128-K block) of a k-block. These are the scale layouts'
// questions, not the scheduler's: the schedulers answer in A's rows and the group's K, and each grouped op lays its
// scales out as below.

#include "hopgemm/device/common.cuh"
#include "hopgemm/device/kernels/sm90_fp8_gemm_types.cuh"
#include "hopgemm/device/scheduler/sm90_scheduler.cuh"

namespace hopgemm::device::collective {

// Scales per 128 K (both recipes).
inline constexpr int kFp8ScaleBlockK = 128;

// The row of A's per-row scales of unit u: A's row, except for the masked layout's MN-major scales, one
// [G x ceil(K/128)] x M_max map (sfa_group_k_blocks != 0), where it is the row inside the group.
template <scheduler::TileScheduler Scheduler>
HOPGEMM_DEVICE i32 fp8_sfa_row(const Sm90Fp8ScaleParams& sp, const Scheduler& sched, const scheduler::WorkUnit& u) {
  if constexpr (Scheduler::kGrouping == kGroupingMRanges)
    return sp.sfa_group_k_blocks != 0 ? sched.group_row(u) : sched.a_row(u);
  else
    return sched.a_row(u);
}

// The scale column of the unit's k-block kb: the masked MN-major sfa's group columns come one after another; the
// K-grouped scales are one map over the groups' flat K.
template <scheduler::TileScheduler Scheduler>
HOPGEMM_DEVICE i32 fp8_sf_k_block(const Sm90Fp8ScaleParams& sp, const Scheduler& sched, const scheduler::WorkUnit& u,
                                  i32 kb) {
  if constexpr (Scheduler::kGrouping == kGroupingMRanges)
    return u.group * sp.sfa_group_k_blocks + kb;
  else if constexpr (Scheduler::kGrouping == kGroupingK)
    return static_cast<i32>(sched.group_k_begin() / kFp8ScaleBlockK) + kb;
  else
    return kb;
}

}  // namespace hopgemm::device::collective
