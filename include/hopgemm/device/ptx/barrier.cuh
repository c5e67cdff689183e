#pragma once
// Named CTA barriers (sm_70).

#include "hopgemm/device/common.cuh"

namespace hopgemm::device::ptx {

// bar.sync id, count;  (sm_70) count threads (multiple of 32) rendezvous on named barrier id (0..15).
HOPGEMM_DEVICE void bar_sync(u32 id, u32 count) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(count) : "memory");
}

// bar.arrive id, count;  (sm_70) counts this warp's threads on named barrier id without waiting
// (producer side of a bar.sync rendezvous).
HOPGEMM_DEVICE void bar_arrive(u32 id, u32 count) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(count) : "memory");
}

}  // namespace hopgemm::device::ptx
