#pragma once
// Vector reductions into global memory (sm_90): fire-and-forget adds performed in L2.

#include "hopgemm/device/common.cuh"

namespace hopgemm::device::ptx {

// red.global.add.v2.f32 [addr], {a, b};  8-byte aligned addr; relaxed, gpu scope. Like the TMA reduce-add it
// replaces (cp.reduce.async.bulk .add.f32), the f32 add in global memory flushes subnormal inputs and results to
// sign-preserving zero (PTX ISA), so D += A B^T keeps DeepGEMM's semantics there.
HOPGEMM_DEVICE void red_global_add_v2_f32(float* p, float a, float b) {
  asm volatile("red.global.add.v2.f32 [%0], {%1, %2};\n" ::"l"(p), "f"(a), "f"(b) : "memory");
}

}  // namespace hopgemm::device::ptx
