#pragma once
// Config and parameters of the fused FP8 quantisation kernel (kernels/sm90_quantize_fp8.cuh).
// Compiles as device code (NVRTC, NVCC) and as plain host C++20: the host fills QuantizeParams.
//
// x [m, n] (BF16 or FP32, row-major rows, any row stride) -> x_fp8 [m, n] e4m3 (row-major rows) and FP32 sf:
//   per token   (1 x gran along n):    sf [m, ceil(n / gran)]
//   per block   (gran x gran):         sf [ceil(m / gran), ceil(n / gran)]
//   per channel (gran x 1 along m):    sf [m / gran, n]           (m % gran == 0)
// Numerics = DeepGEMM's Python helpers run by PyTorch on CUDA, bit for bit:
//   amax = NaN-propagating max |x| over the group (FP32; partial groups padded with zeros),
//   sf   = max(amax, 1e-4) * fl(1/448)   (torch evaluates `t / 448.0` on CUDA as t * fl32(1/448)),
//   ue8m0: sf = 2^clamp(exponent(sf) + (mantissa(sf) != 0), 1, 254),
//   inv  = 1 / sf (IEEE, what `1.0 / sf` = sf.reciprocal() computes),
//   x_fp8 = e4m3 round-to-nearest-even of the IEEE product x * inv, saturating to +-448, NaN -> NaN.
//
// Launch (all 1-D): block (quantize_num_threads(cfg)), grid (quantize_num_blocks(cfg, m, n)), no dynamic smem.
//   per token:   each group of gran elements is handled by gran / vec lanes (16 bytes each); a block covers
//                quantize_token_groups_per_block(cfg) consecutive groups of the flattened [m, groups] grid.
//   per block:   one block per gran x gran tile (128-512 threads); block b = (tile row b / num_col_tiles,
//                tile col b % num_col_tiles).
//   per channel: one block per (gran rows x 32 * vec columns) tile, same decoding with num_col_tiles.

#include "hopgemm/device/common.cuh"

namespace hopgemm::device {

enum QuantizeKind : int { kQuantPerToken = 0, kQuantPerBlock = 1, kQuantPerChannel = 2 };
enum QuantizeInput : int { kQuantInBf16 = 0, kQuantInFp32 = 1 };

// All fields int: a structural C++20 NTTP, no padding. Only what changes the code is here; sizes are params.
struct QuantizeConfig {
  int kind = kQuantPerToken;
  int in_dtype = kQuantInBf16;
  int gran = 128;      // group extent: 32, 64 or 128
  int use_ue8m0 = 0;   // 1: scales rounded up to powers of two
};

struct QuantizeParams {
  const void* x;
  void* x_fp8;
  float* sf;
  i64 x_ld;      // row stride of x (elements)
  i64 out_ld;    // row stride of x_fp8 (elements = bytes)
  i64 sf_ld;     // row stride of sf (elements)
  i64 sf_cs;     // column stride of sf (elements)
  i32 m, n;
  i32 vector_io;      // 1: x rows start 16-byte aligned and x_fp8 rows quantize_vec(cfg)-byte aligned
  i32 num_col_tiles;  // per block / per channel: column tiles per tile row
};

inline constexpr int kQuantizeThreads = 256;       // per token and per channel
inline constexpr int kQuantizeTokenUnroll = 4;  // groups in flight per lane group (per token)

HOPGEMM_HOST_DEVICE constexpr int quantize_in_bytes(const QuantizeConfig& c) { return c.in_dtype == kQuantInFp32 ? 4 : 2; }
// Elements per 16-byte vector of x (8 BF16, 4 FP32): also the FP8 bytes each lane stores at once.
HOPGEMM_HOST_DEVICE constexpr int quantize_vec(const QuantizeConfig& c) { return 16 / quantize_in_bytes(c); }
// Per token: lanes per group and groups per block.
HOPGEMM_HOST_DEVICE constexpr int quantize_token_lanes(const QuantizeConfig& c) { return c.gran / quantize_vec(c); }
HOPGEMM_HOST_DEVICE constexpr int quantize_token_groups_per_block(const QuantizeConfig& c) {
  return kQuantizeThreads / quantize_token_lanes(c) * kQuantizeTokenUnroll;
}
// Per block: 16-byte vectors in a tile; a thread holds quantize_block_vecs_per_thread of them (8 when the
// tile is large enough: 32 registers of x per thread, no spills), with 128 to 512 threads per block.
HOPGEMM_HOST_DEVICE constexpr int quantize_block_tile_vecs(const QuantizeConfig& c) { return c.gran * c.gran / quantize_vec(c); }
HOPGEMM_HOST_DEVICE constexpr int quantize_num_threads(const QuantizeConfig& c) {
  if (c.kind != kQuantPerBlock) return kQuantizeThreads;
  const int tile_vecs = quantize_block_tile_vecs(c);
  const int lo = tile_vecs < 128 ? tile_vecs : 128;
  const int want = tile_vecs / 8;
  return want < lo ? lo : (want > 512 ? 512 : want);
}
HOPGEMM_HOST_DEVICE constexpr int quantize_block_vecs_per_thread(const QuantizeConfig& c) {
  return quantize_block_tile_vecs(c) / quantize_num_threads(c);
}
// Per channel: columns of a tile (one 16-byte vector per lane of a warp), rows per thread (8 warps).
HOPGEMM_HOST_DEVICE constexpr int quantize_channel_cols(const QuantizeConfig& c) { return 32 * quantize_vec(c); }
HOPGEMM_HOST_DEVICE constexpr int quantize_channel_rows_per_thread(const QuantizeConfig& c) {
  return c.gran / (kQuantizeThreads / 32);
}

HOPGEMM_HOST_DEVICE constexpr bool is_valid(const QuantizeConfig& c) {
  return (c.kind == kQuantPerToken || c.kind == kQuantPerBlock || c.kind == kQuantPerChannel) &&
         (c.in_dtype == kQuantInBf16 || c.in_dtype == kQuantInFp32) && (c.gran == 32 || c.gran == 64 || c.gran == 128) &&
         (c.use_ue8m0 == 0 || c.use_ue8m0 == 1);
}

// Column tiles per tile row (per block / per channel); 0 for per token.
HOPGEMM_HOST_DEVICE constexpr i64 quantize_num_col_tiles(const QuantizeConfig& c, i64 n) {
  return c.kind == kQuantPerBlock ? ceil_div<i64>(n, c.gran)
         : c.kind == kQuantPerChannel ? ceil_div<i64>(n, quantize_channel_cols(c))
                                      : 0;
}
// Blocks of the 1-D grid for an [m, n] input.
HOPGEMM_HOST_DEVICE constexpr i64 quantize_num_blocks(const QuantizeConfig& c, i64 m, i64 n) {
  if (c.kind == kQuantPerToken) return ceil_div<i64>(m * ceil_div<i64>(n, c.gran), quantize_token_groups_per_block(c));
  const i64 tile_rows = c.kind == kQuantPerBlock ? ceil_div<i64>(m, c.gran) : m / c.gran;
  return tile_rows * quantize_num_col_tiles(c, n);
}

}  // namespace hopgemm::device
