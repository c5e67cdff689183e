#pragma once
// Plain global loads into registers, as asm volatile so they stay where they are issued (ahead of a barrier
// wait that the compiler must not hoist them past or sink them below).

#include "hopgemm/device/common.cuh"

namespace hopgemm::device::ptx {

// ld.global.v4.f32 {a, b, c, d}, [addr];  16-byte aligned addr.
HOPGEMM_DEVICE void ld_global_v4_f32(const float* p, float& a, float& b, float& c, float& d) {
  asm volatile("ld.global.v4.f32 {%0, %1, %2, %3}, [%4];\n" : "=f"(a), "=f"(b), "=f"(c), "=f"(d) : "l"(p));
}

// ld.global.f32 v, [addr];
HOPGEMM_DEVICE float ld_global_f32(const float* p) {
  float v;
  asm volatile("ld.global.f32 %0, [%1];\n" : "=f"(v) : "l"(p));
  return v;
}

}  // namespace hopgemm::device::ptx
