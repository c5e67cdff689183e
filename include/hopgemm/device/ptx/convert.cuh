#pragma once
// Conversions and exactly-rounded FP32 arithmetic (quantisation kernels, epilogues).
// Every wrapper names its rounding explicitly and never uses .ftz, so the results do not depend on the
// compiler's -ftz / -prec-div / --fmad flags: they are bit-identical to PyTorch's (non-fast-math) kernels.

#include "hopgemm/device/common.cuh"

namespace hopgemm::device::ptx {

// mul.rn.f32 d, a, b;  (all SMs) IEEE product, round to nearest even, subnormals kept; never fused into an FMA.
HOPGEMM_DEVICE float mul_rn(float a, float b) {
  float d;
  asm("mul.rn.f32 %0, %1, %2;" : "=f"(d) : "f"(a), "f"(b));
  return d;
}

// rcp.rn.f32 d, a;  (sm_20+) IEEE 1 / a, round to nearest even (== div.rn.f32 1, a), subnormals kept.
HOPGEMM_DEVICE float rcp_rn(float a) {
  float d;
  asm("rcp.rn.f32 %0, %1;" : "=f"(d) : "f"(a));
  return d;
}

// cvt.rn.satfinite.e4m3x2.f32 d, hi, lo;  (sm_89+) two FP32 -> two e4m3fn bytes, round to nearest even;
// finite overflow (and +-inf) saturates to +-448, NaN -> 0x7f. Returns lo in bits 0..7, hi in 8..15.
HOPGEMM_DEVICE u16 cvt_e4m3x2(float lo, float hi) {
  u16 d;
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(d) : "f"(hi), "f"(lo));
  return d;
}

// Four FP32 -> four e4m3 bytes, element i in byte i (little-endian memory order).
HOPGEMM_DEVICE u32 cvt_e4m3x4(float v0, float v1, float v2, float v3) {
  return static_cast<u32>(cvt_e4m3x2(v0, v1)) | (static_cast<u32>(cvt_e4m3x2(v2, v3)) << 16);
}

// cvt.rn.bf16x2.f32 d, hi, lo;  (sm_80+) two FP32 -> two BF16, round to nearest even; lo in bits 0..15 (the lower
// address), hi in 16..31.
HOPGEMM_DEVICE u32 cvt_bf16x2(float lo, float hi) {
  u32 d;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(d) : "f"(hi), "f"(lo));
  return d;
}

// BF16 -> FP32 is exact: the BF16 bits are the FP32's upper half (NaN payloads and signs kept).
HOPGEMM_DEVICE float bf16_bits_to_float(u32 bits16) { return __uint_as_float(bits16 << 16); }
// The two BF16 values packed in a 32-bit word (element 0 in the low half).
HOPGEMM_DEVICE float bf16x2_lo(u32 word) { return __uint_as_float(word << 16); }
HOPGEMM_DEVICE float bf16x2_hi(u32 word) { return __uint_as_float(word & 0xffff0000u); }

}  // namespace hopgemm::device::ptx
