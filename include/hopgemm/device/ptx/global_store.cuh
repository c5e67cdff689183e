#pragma once
// Stores and fire-and-forget reductions into global memory from registers (sm_90).

#include "hopgemm/device/common.cuh"

namespace hopgemm::device::ptx {

// red.global.add.v2.f32 [addr], {a, b};  8-byte aligned addr; relaxed, gpu scope; performed in L2.
HOPGEMM_DEVICE void red_global_add_v2_f32(float* p, float a, float b) {
  asm volatile("red.global.add.v2.f32 [%0], {%1, %2};\n" ::"l"(p), "f"(a), "f"(b) : "memory");
}

// st.global.v2.f32 [addr], {a, b};  8-byte aligned addr.
HOPGEMM_DEVICE void st_global_v2_f32(float* p, float a, float b) {
  asm volatile("st.global.v2.f32 [%0], {%1, %2};\n" ::"l"(p), "f"(a), "f"(b) : "memory");
}

// st.global.b32 [addr], packed;  4-byte aligned addr (two BF16 values, the lower one first in memory).
HOPGEMM_DEVICE void st_global_b32(void* p, u32 packed) {
  asm volatile("st.global.b32 [%0], %1;\n" ::"l"(p), "r"(packed) : "memory");
}

}  // namespace hopgemm::device::ptx
