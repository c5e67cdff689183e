#pragma once
// Keeping a value from being rematerialised. ptxas rebuilds cheap address arithmetic (the CTA's shared-window
// base from SR_CgaCtaId, a descriptor from it) where it is used rather than hold it in a register, and in the
// FP8 GEMM's consumer that use is right after a barrier wait, on the path where both warpgroups keep the tensor
// cores waiting (docs/DESIGN_NOTES.md). After opaque(v) the compiler must assume v changed here, so it
// keeps the value from this point.
#include "hopgemm/device/common.cuh"

namespace hopgemm::device::ptx {

HOPGEMM_DEVICE void opaque(u32& v) { asm volatile("" : "+r"(v)); }
HOPGEMM_DEVICE void opaque(u64& v) { asm volatile("" : "+l"(v)); }

}  // namespace hopgemm::device::ptx
