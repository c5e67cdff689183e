#pragma once
// wgmma.mma_async.sync.aligned.m64nNk8.f32.tf32.tf32 d, {a0, a1, a2, a3}, b-desc, p, 1, 1;  (sm_90a)
// A from registers (four TF32 values per thread: rows r and r + 8 of the warp's 16, columns t and t + 4 of the eight,
// r = lane / 4, t = lane % 4), B from shared memory (descriptor, K-major), FP32 accumulators; N = 16 or 32 (the
// hyper-connection pre-norm GEMM's widths). scale_d == 0 overwrites the accumulators, != 0 accumulates.

#include "hopgemm/device/common.cuh"

namespace hopgemm::device::ptx {

template <int N>
struct WgmmaTf32RegA;

template <>
struct WgmmaTf32RegA<16> {
  HOPGEMM_DEVICE static void mma(float (&d)[8], const u32 (&a)[4], u64 desc_b, u32 scale_d) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %13, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n16k8.f32.tf32.tf32 {%0, %1, %2, %3, %4, %5, %6, %7}, {%8, %9, %10, %11}, "
        "%12, p, 1, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d));
  }
};

template <>
struct WgmmaTf32RegA<32> {
  HOPGEMM_DEVICE static void mma(float (&d)[16], const u32 (&a)[4], u64 desc_b, u32 scale_d) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %21, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n32k8.f32.tf32.tf32 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, "
        "%13, %14, %15}, {%16, %17, %18, %19}, %20, p, 1, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d));
  }
};

}  // namespace hopgemm::device::ptx
