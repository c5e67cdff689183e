#pragma once
// Plain global loads (and the one vector store the streaming kernels need), as asm volatile so they stay where
// they are issued (ahead of a barrier wait that the compiler must not hoist them past or sink them below).

#include "hopgemm/device/common.cuh"

namespace hopgemm::device::ptx {

// ld.global.v4.f32 {a, b, c, d}, [addr];  16-byte aligned addr.
HOPGEMM_DEVICE void ld_global_v4_f32(const float* p, float& a, float& b, float& c, float& d) {
  asm volatile("ld.global.v4.f32 {%0, %1, %2, %3}, [%4];\n" : "=f"(a), "=f"(b), "=f"(c), "=f"(d) : "l"(p));
}

// ld.global.v4.u32 {a, b, c, d}, [addr];  16-byte aligned addr.
HOPGEMM_DEVICE void ld_global_v4_u32(const void* p, u32 (&v)[4]) {
  asm volatile("ld.global.v4.u32 {%0, %1, %2, %3}, [%4];\n" : "=r"(v[0]), "=r"(v[1]), "=r"(v[2]), "=r"(v[3]) : "l"(p));
}

// ld.global.cs.v4.f32: data read once (evict-first).
HOPGEMM_DEVICE void ld_global_cs_v4_f32(const float* p, float (&v)[4]) {
  asm volatile("ld.global.cs.v4.f32 {%0, %1, %2, %3}, [%4];\n" : "=f"(v[0]), "=f"(v[1]), "=f"(v[2]), "=f"(v[3]) : "l"(p));
}

// st.global.v4.u32 [addr], {a, b, c, d};  16-byte aligned addr.
HOPGEMM_DEVICE void st_global_v4_u32(void* p, const u32 (&v)[4]) {
  asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};\n" ::"l"(p), "r"(v[0]), "r"(v[1]), "r"(v[2]), "r"(v[3])
               : "memory");
}

// ld.global.f32 v, [addr];
HOPGEMM_DEVICE float ld_global_f32(const float* p) {
  float v;
  asm volatile("ld.global.f32 %0, [%1];\n" : "=f"(v) : "l"(p));
  return v;
}

// ld.global.nc.s32 v, [addr];  read-only for the kernel's lifetime (grouped layouts, masked_m, ks).
HOPGEMM_DEVICE i32 ld_global_nc_i32(const i32* p) {
  i32 v;
  asm volatile("ld.global.nc.s32 %0, [%1];\n" : "=r"(v) : "l"(p));
  return v;
}

// st.global.b32 [addr], v;
HOPGEMM_DEVICE void st_global_b32(void* p, u32 v) { asm volatile("st.global.b32 [%0], %1;\n" ::"l"(p), "r"(v) : "memory"); }

}  // namespace hopgemm::device::ptx
