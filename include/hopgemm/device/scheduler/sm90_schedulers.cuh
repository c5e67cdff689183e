#pragma once
// Every SM90 tile scheduler, and the one a grouping takes (kernels/sm90_gemm_types.cuh: Sm90Grouping).

#include "hopgemm/device/scheduler/sm90_batched_scheduler.cuh"
#include "hopgemm/device/scheduler/sm90_dense_scheduler.cuh"
#include "hopgemm/device/scheduler/sm90_k_grouped_scheduler.cuh"
#include "hopgemm/device/scheduler/sm90_m_group_ids_scheduler.cuh"
#include "hopgemm/device/scheduler/sm90_m_group_ranges_scheduler.cuh"

namespace hopgemm::device::scheduler {

template <int kGrouping, Sm90TileGeometry kGeo>
struct SchedulerFor {
  using Type = Sm90DenseScheduler<kGeo>;
};
template <Sm90TileGeometry kGeo>
struct SchedulerFor<kGroupingMIds, kGeo> {
  using Type = Sm90MGroupIdsScheduler<kGeo>;
};
template <Sm90TileGeometry kGeo>
struct SchedulerFor<kGroupingMRanges, kGeo> {
  using Type = Sm90MGroupRangesScheduler<kGeo>;
};
template <Sm90TileGeometry kGeo>
struct SchedulerFor<kGroupingK, kGeo> {
  using Type = Sm90KGroupedScheduler<kGeo>;
};

template <Sm90TileGeometry kGeo>
struct SchedulerFor<kGroupingKRanges, kGeo> {
  using Type = Sm90KRangesScheduler<kGeo>;
};
template <Sm90TileGeometry kGeo>
struct SchedulerFor<kGroupingBatched, kGeo> {
  using Type = Sm90BatchedScheduler<kGeo>;
};
template <Sm90TileGeometry kGeo>
struct SchedulerFor<kGroupingBatchSum, kGeo> {
  using Type = Sm90BatchSumScheduler<kGeo>;
};

}  // namespace hopgemm::device::scheduler
