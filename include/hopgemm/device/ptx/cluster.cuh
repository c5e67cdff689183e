#pragma once
// Thread-block-cluster wrappers (sm_90).

#include "hopgemm/device/common.cuh"

namespace hopgemm::device::ptx {

// mov.u32 r, %cluster_ctarank;  (sm_90) rank of this CTA in its cluster.
HOPGEMM_DEVICE u32 cluster_ctarank() {
  u32 r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}

// barrier.cluster.arrive.release.aligned;  (sm_90)
HOPGEMM_DEVICE void barrier_cluster_arrive() { asm volatile("barrier.cluster.arrive.release.aligned;\n" ::: "memory"); }

// barrier.cluster.wait.acquire.aligned;  (sm_90)
HOPGEMM_DEVICE void barrier_cluster_wait() { asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory"); }

// Whole-cluster rendezvous (every thread of every CTA of the cluster).
HOPGEMM_DEVICE void cluster_sync() {
  barrier_cluster_arrive();
  barrier_cluster_wait();
}

}  // namespace hopgemm::device::ptx
