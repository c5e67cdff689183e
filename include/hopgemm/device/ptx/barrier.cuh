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

// bar.red.or.pred p, id, count, q;  (sm_70) bar.sync that also returns, in every participating thread, whether
// any of them passed `value` true.
HOPGEMM_DEVICE bool bar_sync_or(u32 id, u32 count, bool value) {
  u32 result;
  asm volatile(
      "{\n.reg .pred in, out;\nsetp.ne.u32 in, %3, 0;\nbar.red.or.pred out, %1, %2, in;\nselp.u32 %0, 1, 0, out;\n}\n"
      : "=r"(result)
      : "r"(id), "r"(count), "r"(static_cast<u32>(value))
      : "memory");
  return result != 0;
}

}  // namespace hopgemm::device::ptx
