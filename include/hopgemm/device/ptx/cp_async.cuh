#pragma once
// Non-bulk asynchronous copies global -> shared (sm_80).

#include "hopgemm/device/common.cuh"

namespace hopgemm::device::ptx {

// cp.async.ca.shared.global [dst], [src], 4, src_size;  (sm_80) src_size 0 writes zeros without
// reading src (used for rows past the end of a tensor).
HOPGEMM_DEVICE void cp_async_ca_4(u32 dst_smem, const void* src, bool valid) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst_smem), "l"(src), "r"(valid ? 4 : 0)
               : "memory");
}

}  // namespace hopgemm::device::ptx
