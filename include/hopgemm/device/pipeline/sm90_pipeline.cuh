#pragma once
// A ring of shared-memory slots guarded by full/empty mbarrier pairs. The producer waits until a slot is empty and
// fills it (TMA completes the full barrier's transaction bytes, other loaders arrive on it); the consumers wait
// until it is full and release it with arrivals on its empty barrier. Producer and consumers each walk a StageRing
// copy over the same slots, so both sides agree on (slot, phase) without talking.

#include "hopgemm/device/common.cuh"
#include "hopgemm/device/pipeline/sm90_stage_ring.cuh"
#include "hopgemm/device/ptx/mbarrier.cuh"

namespace hopgemm::device::pipeline {

template <int kSlots>
struct MbarrierPipeline {
  using Ring = StageRing<kSlots>;
  u64* full;   // [kSlots]
  u64* empty;  // [kSlots]

  // By one thread, before the CTA (cluster) barrier that publishes the barriers.
  HOPGEMM_DEVICE void init(u32 full_arrivals, u32 empty_arrivals) const {
    for (int s = 0; s < kSlots; ++s) {
      ptx::mbarrier_init(&full[s], full_arrivals);
      ptx::mbarrier_init(&empty[s], empty_arrivals);
    }
  }
  HOPGEMM_DEVICE void wait_empty(Ring r) const { ptx::mbarrier_wait(&empty[r.stage], r.phase ^ 1); }
  HOPGEMM_DEVICE void wait_full(Ring r) const { ptx::mbarrier_wait(&full[r.stage], r.phase); }
  HOPGEMM_DEVICE u64* full_barrier(u32 slot) const { return &full[slot]; }
  HOPGEMM_DEVICE void arrive_full(u32 slot) const { ptx::mbarrier_arrive(&full[slot]); }
  HOPGEMM_DEVICE void arrive_empty(u32 slot) const { ptx::mbarrier_arrive(&empty[slot]); }
  // One warp's release of `slot`: lane r arrives on CTA r's empty barrier when the slot was filled by multicast
  // into every CTA of the cluster, else lane 0 on this CTA's.
  template <int kClusterSize>
  HOPGEMM_DEVICE void release_by_warp(u32 slot, u32 lane) const {
    if constexpr (kClusterSize > 1) {
      if (lane < kClusterSize) ptx::mbarrier_arrive_cluster(&empty[slot], lane);
    } else {
      if (lane == 0) ptx::mbarrier_arrive(&empty[slot]);
    }
  }
};

}  // namespace hopgemm::device::pipeline
