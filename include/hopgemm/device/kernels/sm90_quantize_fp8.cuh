#pragma once
// Fused FP8 (e4m3) quantisation: one pass over x, amax and scale computed on chip, x quantised from
// registers. Config, params, numerics and launch geometry: sm90_quantize_fp8_types.cuh.
//
// Memory path: every lane moves 16 bytes of x per load (ld.global.nc, no L1 allocation: x is read once)
// and vec FP8 bytes per store; rows that are not 16-byte aligned (odd n or row stride) and the ragged end of
// a row fall back to element accesses, decided per lane, so any n and any row stride work.

#include "hopgemm/device/common.cuh"
#include "hopgemm/device/kernels/sm90_quantize_fp8_types.cuh"
#include "hopgemm/device/ptx/convert.cuh"
#include "hopgemm/device/ptx/reduce.cuh"

namespace hopgemm::device {
namespace quantize_detail {

// 16 bytes of x as four 32-bit words: 8 BF16 (two per word, element 0 in the low half) or 4 FP32.
struct Vec16 {
  u32 w[4];
};

HOPGEMM_DEVICE Vec16 ld_global_nc_v4(const void* p) {
  Vec16 v;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.w[0]), "=r"(v.w[1]), "=r"(v.w[2]), "=r"(v.w[3])
               : "l"(p));
  return v;
}

template <int kInBytes>
HOPGEMM_DEVICE float element(const Vec16& v, int e) {
  if constexpr (kInBytes == 4) return __uint_as_float(v.w[e]);
  else return (e % 2 == 0) ? ptx::bf16x2_lo(v.w[e / 2]) : ptx::bf16x2_hi(v.w[e / 2]);
}

// Elements [col, col + vec) of one row of x (row_ptr points at element 0 of the row). Elements past n, or
// all of them when !valid, read as +0 (the zero padding of DeepGEMM's reference).
template <int kInBytes>
HOPGEMM_DEVICE Vec16 load_x(const u8* row_ptr, int col, int n, bool vector_io, bool valid) {
  constexpr int kVec = 16 / kInBytes;
  Vec16 v = {{0u, 0u, 0u, 0u}};
  if (!valid) return v;
  if (vector_io && col + kVec <= n) return ld_global_nc_v4(row_ptr + static_cast<i64>(col) * kInBytes);
#pragma unroll
  for (int e = 0; e < kVec; ++e) {
    if (col + e < n) {
      if constexpr (kInBytes == 4) {
        v.w[e] = *reinterpret_cast<const u32*>(row_ptr + static_cast<i64>(col + e) * 4);
      } else {
        const u32 bits = *reinterpret_cast<const u16*>(row_ptr + static_cast<i64>(col + e) * 2);
        v.w[e / 2] |= bits << (16 * (e % 2));
      }
    }
  }
  return v;
}

template <int kInBytes>
HOPGEMM_DEVICE float abs_max(const Vec16& v, float acc) {
#pragma unroll
  for (int e = 0; e < 16 / kInBytes; ++e) acc = ptx::max_nan(acc, ptx::abs_f32(element<kInBytes>(v, e)));
  return acc;
}

// torch: `x.abs().float().amax(...).clamp(1e-4) / 448.0`, then optionally DeepGEMM's ceil_to_ue8m0.
template <bool kUe8m0>
HOPGEMM_DEVICE float scale_from_amax(float amax) {
  constexpr float kInv448 = 1.0f / 448.0f;  // fl32(1/448): torch's CUDA division by a CPU scalar multiplies by it
  float sf = ptx::mul_rn(ptx::max_nan(amax, 1e-4f), kInv448);  // max.NaN == clamp_min with NaN kept
  if constexpr (kUe8m0) {
    const u32 bits = __float_as_uint(sf) & 0x7fffffffu;
    int exp = static_cast<int>((bits >> 23) & 0xffu) + ((bits & 0x7fffffu) != 0u ? 1 : 0);
    exp = exp < 1 ? 1 : (exp > 254 ? 254 : exp);
    sf = __uint_as_float(static_cast<u32>(exp) << 23);
  }
  return sf;
}

// Stores the vec FP8 bytes of `out` at [col, col + vec) of one row of x_fp8, dropping those past n.
template <int kInBytes>
HOPGEMM_DEVICE void store_fp8(u8* row_ptr, int col, int n, bool vector_io, const u32* out) {
  constexpr int kVec = 16 / kInBytes;
  u8* p = row_ptr + col;
  if (vector_io && col + kVec <= n) {
    if constexpr (kVec == 8) {
      asm volatile("st.global.v2.u32 [%0], {%1, %2};" ::"l"(p), "r"(out[0]), "r"(out[1]) : "memory");
    } else {
      asm volatile("st.global.u32 [%0], %1;" ::"l"(p), "r"(out[0]) : "memory");
    }
    return;
  }
#pragma unroll
  for (int e = 0; e < kVec; ++e) {
    if (col + e < n) p[e] = static_cast<u8>(out[e / 4] >> (8 * (e % 4)));
  }
}

template <int kInBytes>
struct Fp8Words {
  u32 w[16 / kInBytes / 4];  // 2 words (8 bytes) for BF16, 1 word (4 bytes) for FP32
};

// e4m3 bytes of x * inv for the vec elements of v, element e in byte e. inv is per element (per channel:
// one scale per column; otherwise the same value repeated).
template <int kInBytes>
HOPGEMM_DEVICE Fp8Words<kInBytes> quantize(const Vec16& v, const float* inv) {
  constexpr int kVec = 16 / kInBytes;
  Fp8Words<kInBytes> out;
#pragma unroll
  for (int q = 0; q < kVec / 4; ++q) {
    out.w[q] = ptx::cvt_e4m3x4(ptx::mul_rn(element<kInBytes>(v, 4 * q + 0), inv[4 * q + 0]),
                               ptx::mul_rn(element<kInBytes>(v, 4 * q + 1), inv[4 * q + 1]),
                               ptx::mul_rn(element<kInBytes>(v, 4 * q + 2), inv[4 * q + 2]),
                               ptx::mul_rn(element<kInBytes>(v, 4 * q + 3), inv[4 * q + 3]));
  }
  return out;
}

// ---- per token: gran / vec lanes per group, kQuantizeTokenUnroll groups in flight per lane group ----------
template <QuantizeConfig kConfig>
HOPGEMM_DEVICE void per_token(const QuantizeParams& p) {
  constexpr int kInBytes = quantize_in_bytes(kConfig);
  constexpr int kVec = quantize_vec(kConfig);
  constexpr int kLanes = quantize_token_lanes(kConfig);            // lanes per group (power of two <= 32)
  constexpr int kSlots = kQuantizeThreads / kLanes;                 // groups per block step
  constexpr int kUnroll = kQuantizeTokenUnroll;
  static_assert(kLanes >= 1 && kLanes <= 32, "a group must fit in one warp");

  const u32 groups_per_row = static_cast<u32>(ceil_div(p.n, kConfig.gran));
  const u32 total = static_cast<u32>(p.m) * groups_per_row;  // host checks < 2^31
  const int lane = threadIdx.x % kLanes;
  const u32 first = blockIdx.x * static_cast<u32>(kSlots * kUnroll) + threadIdx.x / kLanes;
  const bool vector_io = p.vector_io != 0;

  // Issue every load first (kUnroll x 16 bytes in flight per lane), then reduce and quantise.
  Vec16 v[kUnroll];
  u32 row[kUnroll], col[kUnroll];
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    const u32 task = first + u * kSlots;
    row[u] = task / groups_per_row;
    col[u] = (task % groups_per_row) * kConfig.gran + lane * kVec;
    const u8* row_ptr = static_cast<const u8*>(p.x) + static_cast<i64>(row[u]) * p.x_ld * kInBytes;
    v[u] = load_x<kInBytes>(row_ptr, static_cast<int>(col[u]), p.n, vector_io, task < total);
  }
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    const u32 task = first + u * kSlots;
    const float amax = ptx::group_max_nan<kLanes>(abs_max<kInBytes>(v[u], 0.0f));  // whole warp takes part
    if (task >= total) continue;
    const float sf = scale_from_amax<kConfig.use_ue8m0 != 0>(amax);
    const float inv = ptx::rcp_rn(sf);
    float inv_vec[kVec];
#pragma unroll
    for (int e = 0; e < kVec; ++e) inv_vec[e] = inv;
    const auto q = quantize<kInBytes>(v[u], inv_vec);
    store_fp8<kInBytes>(static_cast<u8*>(p.x_fp8) + static_cast<i64>(row[u]) * p.out_ld, static_cast<int>(col[u]), p.n,
                        vector_io, q.w);
    if (lane == 0) p.sf[static_cast<i64>(row[u]) * p.sf_ld + static_cast<i64>(col[u] / kConfig.gran) * p.sf_cs] = sf;
  }
}

// ---- per block: one gran x gran tile per block, held in registers between the amax and the quantisation ---
template <QuantizeConfig kConfig>
HOPGEMM_DEVICE void per_block(const QuantizeParams& p) {
  constexpr int kInBytes = quantize_in_bytes(kConfig);
  constexpr int kVec = quantize_vec(kConfig);
  constexpr int kThreads = quantize_num_threads(kConfig);
  constexpr int kVecsPerThread = quantize_block_vecs_per_thread(kConfig);
  constexpr int kVecsPerRow = kConfig.gran / kVec;
  constexpr int kWarps = kThreads / 32;
  static_assert(kThreads % 32 == 0 && kVecsPerThread >= 1, "tile must cover whole warps");

  __shared__ float warp_amax[kWarps];
  const i64 tile_row = blockIdx.x / p.num_col_tiles, tile_col = blockIdx.x % p.num_col_tiles;
  const int row0 = static_cast<int>(tile_row) * kConfig.gran, col0 = static_cast<int>(tile_col) * kConfig.gran;
  const bool vector_io = p.vector_io != 0;

  // Thread t holds vectors t, t + kThreads, ...: consecutive lanes read consecutive 16 bytes of a row.
  Vec16 v[kVecsPerThread];
  float amax = 0.0f;
#pragma unroll
  for (int i = 0; i < kVecsPerThread; ++i) {
    const int idx = static_cast<int>(threadIdx.x) + i * kThreads;
    const int r = row0 + idx / kVecsPerRow, c = col0 + (idx % kVecsPerRow) * kVec;
    const u8* row_ptr = static_cast<const u8*>(p.x) + static_cast<i64>(r) * p.x_ld * kInBytes;
    v[i] = load_x<kInBytes>(row_ptr, c, p.n, vector_io, r < p.m);
  }
#pragma unroll
  for (int i = 0; i < kVecsPerThread; ++i) amax = abs_max<kInBytes>(v[i], amax);
  amax = ptx::warp_max_nan(amax);
  if (threadIdx.x % 32 == 0) warp_amax[threadIdx.x / 32] = amax;
  __syncthreads();
#pragma unroll
  for (int w = 0; w < kWarps; ++w) amax = ptx::max_nan(amax, warp_amax[w]);

  const float sf = scale_from_amax<kConfig.use_ue8m0 != 0>(amax);
  const float inv = ptx::rcp_rn(sf);
  if (threadIdx.x == 0) p.sf[tile_row * p.sf_ld + tile_col * p.sf_cs] = sf;
  float inv_vec[kVec];
#pragma unroll
  for (int e = 0; e < kVec; ++e) inv_vec[e] = inv;
#pragma unroll
  for (int i = 0; i < kVecsPerThread; ++i) {
    const int idx = static_cast<int>(threadIdx.x) + i * kThreads;
    const int r = row0 + idx / kVecsPerRow, c = col0 + (idx % kVecsPerRow) * kVec;
    if (r >= p.m) continue;
    const auto q = quantize<kInBytes>(v[i], inv_vec);
    store_fp8<kInBytes>(static_cast<u8*>(p.x_fp8) + static_cast<i64>(r) * p.out_ld, c, p.n, vector_io, q.w);
  }
}

// ---- per channel: a gran x (32 * vec) tile per block; warp w holds rows w, w + 8, ... of its 32 vectors ----
template <QuantizeConfig kConfig>
HOPGEMM_DEVICE void per_channel(const QuantizeParams& p) {
  constexpr int kInBytes = quantize_in_bytes(kConfig);
  constexpr int kVec = quantize_vec(kConfig);
  constexpr int kWarps = kQuantizeThreads / 32;
  constexpr int kRows = quantize_channel_rows_per_thread(kConfig);

  // Column maxima of each warp, [warp][element of the lane's vector][lane]: conflict-free on both sides.
  __shared__ float col_amax[kWarps][kVec][32];
  const i64 tile_row = blockIdx.x / p.num_col_tiles, tile_col = blockIdx.x % p.num_col_tiles;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const i64 row0 = tile_row * kConfig.gran;
  const int col = static_cast<int>(tile_col) * quantize_channel_cols(kConfig) + lane * kVec;
  const bool vector_io = p.vector_io != 0;

  Vec16 v[kRows];
#pragma unroll
  for (int i = 0; i < kRows; ++i) {
    const i64 r = row0 + warp + i * kWarps;  // m % gran == 0: every row of the tile exists
    v[i] = load_x<kInBytes>(static_cast<const u8*>(p.x) + r * p.x_ld * kInBytes, col, p.n, vector_io, true);
  }
#pragma unroll
  for (int e = 0; e < kVec; ++e) {
    float amax = 0.0f;
#pragma unroll
    for (int i = 0; i < kRows; ++i) amax = ptx::max_nan(amax, ptx::abs_f32(element<kInBytes>(v[i], e)));
    col_amax[warp][e][lane] = amax;
  }
  __syncthreads();

  float sf[kVec], inv[kVec];
#pragma unroll
  for (int e = 0; e < kVec; ++e) {
    float amax = col_amax[0][e][lane];
#pragma unroll
    for (int w = 1; w < kWarps; ++w) amax = ptx::max_nan(amax, col_amax[w][e][lane]);
    sf[e] = scale_from_amax<kConfig.use_ue8m0 != 0>(amax);
    inv[e] = ptx::rcp_rn(sf[e]);
  }
  if (warp == 0) {
#pragma unroll
    for (int e = 0; e < kVec; ++e) {
      if (col + e < p.n) p.sf[tile_row * p.sf_ld + static_cast<i64>(col + e) * p.sf_cs] = sf[e];
    }
  }
#pragma unroll
  for (int i = 0; i < kRows; ++i) {
    const i64 r = row0 + warp + i * kWarps;
    const auto q = quantize<kInBytes>(v[i], inv);
    store_fp8<kInBytes>(static_cast<u8*>(p.x_fp8) + r * p.out_ld, col, p.n, vector_io, q.w);
  }
}

}  // namespace quantize_detail

template <QuantizeConfig kConfig>
__global__ void __launch_bounds__(quantize_num_threads(kConfig), 1) sm90_quantize_fp8_kernel(const __grid_constant__ QuantizeParams params) {
  static_assert(is_valid(kConfig), "invalid QuantizeConfig");
  if constexpr (kConfig.kind == kQuantPerToken) {
    quantize_detail::per_token<kConfig>(params);
  } else if constexpr (kConfig.kind == kQuantPerBlock) {
    quantize_detail::per_block<kConfig>(params);
  } else {
    quantize_detail::per_channel<kConfig>(params);
  }
}

}  // namespace hopgemm::device
