#pragma once
// NaN-propagating maxima and warp reductions (torch.amax semantics: any NaN makes the result NaN;
// plain fmaxf / max.f32 would drop it).

#include "hopgemm/device/common.cuh"

namespace hopgemm::device::ptx {

// max.NaN.f32 d, a, b;  (sm_80+) NaN if either input is NaN (canonical NaN), else the larger; no .ftz.
HOPGEMM_DEVICE float max_nan(float a, float b) {
  float d;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(d) : "f"(a), "f"(b));
  return d;
}

// abs.f32 d, a;  clears the sign bit (NaN stays NaN), no .ftz.
HOPGEMM_DEVICE float abs_f32(float a) {
  float d;
  asm("abs.f32 %0, %1;" : "=f"(d) : "f"(a));
  return d;
}

// shfl.sync.bfly.b32 d, a, lane_mask, 0x1f, member_mask;  (sm_70+) butterfly exchange within the warp.
HOPGEMM_DEVICE float shfl_xor(float a, int lane_mask, u32 member_mask = 0xffffffffu) {
  float d;
  asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, %3;" : "=f"(d) : "f"(a), "r"(lane_mask), "r"(member_mask));
  return d;
}

// NaN-propagating max over aligned groups of kLanes consecutive lanes (kLanes a power of two <= 32); every
// lane of a group gets the group's result. All 32 lanes of the warp must call it.
template <int kLanes>
HOPGEMM_DEVICE float group_max_nan(float v) {
  static_assert(kLanes >= 1 && kLanes <= 32 && (kLanes & (kLanes - 1)) == 0, "kLanes: a power of two <= 32");
#pragma unroll
  for (int mask = kLanes / 2; mask > 0; mask /= 2) v = max_nan(v, shfl_xor(v, mask));
  return v;
}

HOPGEMM_DEVICE float warp_max_nan(float v) { return group_max_nan<32>(v); }

}  // namespace hopgemm::device::ptx
