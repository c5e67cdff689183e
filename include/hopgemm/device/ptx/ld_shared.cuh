#pragma once
// Shared-memory loads by 32-bit shared address. ld_shared_f32 is volatile so it stays after the mbarrier wait
// that makes its data visible (volatile asm keeps its order); with an explicit shared address ptxas does not
// rebuild a generic pointer's shared-window base (S2R of the CTA id in the cluster) before the load.
#include "hopgemm/device/common.cuh"

namespace hopgemm::device::ptx {

HOPGEMM_DEVICE float ld_shared_f32(u32 addr) {
  float v;
  asm volatile("ld.shared.f32 %0, [%1];\n" : "=f"(v) : "r"(addr));
  return v;
}

}  // namespace hopgemm::device::ptx
