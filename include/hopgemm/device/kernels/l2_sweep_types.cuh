#pragma once
// Config and parameters of the L2 sweep (kernels/l2_sweep.cuh), a benchmarking utility: after the timer's
// L2-flush write it reads the flush buffer once, so the dirty lines that write left in L2 are written back
// before the timed call instead of during it, and the timed call starts on a clean, cold L2.
// Compiles as device code (NVRTC, NVCC) and as plain host C++20.
// Launch: grid (any; the kernel loops), block (kL2SweepThreads), no smem.

#include "hopgemm/device/common.cuh"

namespace hopgemm::device {

struct L2SweepConfig {
  int unused = 0;  // one instantiation; a config keeps the JIT's one-struct-per-kernel form
};

inline constexpr int kL2SweepThreads = 512;

struct L2SweepParams {
  const void* buffer;  // 16-byte aligned
  i64 num_vec16;       // 16-byte words to read
  u32* sink;           // written only if the XOR of everything read equals a magic value (keeps the loads)
};

HOPGEMM_HOST_DEVICE constexpr bool is_valid(const L2SweepConfig& c) { return c.unused == 0; }

}  // namespace hopgemm::device
