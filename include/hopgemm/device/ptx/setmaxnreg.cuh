#pragma once
// Per-warpgroup register reallocation (sm_90a). Needs a register cap at kernel entry
// (__launch_bounds__(threads, 1)) and each role in its own branch.

#include "hopgemm/device/common.cuh"

namespace hopgemm::device::ptx {

// setmaxnreg.inc.sync.aligned.u32 N;  (sm_90a)
template <int N>
HOPGEMM_DEVICE void setmaxnreg_inc() {
  static_assert(N % 8 == 0 && N >= 24 && N <= 256, "setmaxnreg takes a multiple of 8 in [24, 256]");
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
}

// setmaxnreg.dec.sync.aligned.u32 N;  (sm_90a)
template <int N>
HOPGEMM_DEVICE void setmaxnreg_dec() {
  static_assert(N % 8 == 0 && N >= 24 && N <= 256, "setmaxnreg takes a multiple of 8 in [24, 256]");
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
}

}  // namespace hopgemm::device::ptx
