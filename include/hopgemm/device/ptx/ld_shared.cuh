#pragma once
// Shared-memory loads by 32-bit shared address, and a way to keep a value from being rematerialised.
// ld_shared_f32 is volatile so it stays after the mbarrier wait that makes its data visible (volatile asm keeps its
// order); with an explicit shared address ptxas does not rebuild a generic pointer's shared-window base (S2R of
// the CTA id in the cluster) before the load.
#include "hopgemm/device/common.cuh"

namespace hopgemm::device::ptx {

HOPGEMM_DEVICE float ld_shared_f32(u32 addr) {
  float v;
  asm volatile("ld.shared.f32 %0, [%1];\n" : "=f"(v) : "r"(addr));
  return v;
}

// The compiler must assume the value changed here, so it keeps it in a register from this point instead of
// recomputing it where it is used (ptxas rematerialises cheap address arithmetic after every barrier wait).
HOPGEMM_DEVICE void opaque(u32& v) { asm volatile("" : "+r"(v)); }
HOPGEMM_DEVICE void opaque(u64& v) { asm volatile("" : "+l"(v)); }

}  // namespace hopgemm::device::ptx
