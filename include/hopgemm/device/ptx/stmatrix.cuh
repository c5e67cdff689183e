#pragma once
// stmatrix (sm_90): warp-collective store of 8x8 b16 matrices from the MMA fragment layout.

#include "hopgemm/device/common.cuh"

namespace hopgemm::device::ptx {

// stmatrix.sync.aligned.m8n8.x4.shared.b16 [addr], {r0, r1, r2, r3};  (sm_90) lanes 8j..8j+7 give
// the row addresses of matrix j; register j holds this lane's two b16 of matrix j.
HOPGEMM_DEVICE void stmatrix_x4(u32 addr, u32 r0, u32 r1, u32 r2, u32 r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(r0), "r"(r1),
               "r"(r2), "r"(r3)
               : "memory");
}

// stmatrix.sync.aligned.m8n8.x2.shared.b16 [addr], {r0, r1};  (sm_90) lanes 0..15 give row addresses.
HOPGEMM_DEVICE void stmatrix_x2(u32 addr, u32 r0, u32 r1) {
  asm volatile("stmatrix.sync.aligned.m8n8.x2.shared.b16 [%0], {%1, %2};\n" ::"r"(addr), "r"(r0), "r"(r1) : "memory");
}

}  // namespace hopgemm::device::ptx
