#pragma once
// The host op kit every SM90 GEMM family shares: the descriptors of a config's operands (any dtype, one 128-byte
// swizzle row of K per box, the tile's rows, half of them where a CTA pair shares the operand, A's tail box), of its
// output and of FP32 scale factors, the C pre-fill, and the launch of a persistent grid (one CTA per SM, capped to the
// clusters that can be co-resident). An op is then validate -> problem -> config -> params (from these maps) ->
// launch_gemm.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include "hopgemm/device/kernels/sm90_gemm_types.cuh"
#include "hopgemm/error.hpp"
#include "hopgemm/tensor.hpp"
#include "jit/loader.hpp"

namespace hopgemm::api::sm90 {

// What the host needs of a config to lay out its descriptors and launch it: the fields every family's config declares
// and what follows from them (kernels/sm90_gemm_types.cuh), with the family's shared-memory size.
struct GemmTile {
  int block_m = 0, block_n = 0;
  int cluster_m = 1, cluster_n = 1;
  int math_wgs = 0;
  int d_swizzle_bytes = 0, out_elem_bytes = 0;
  bool reduces_from_registers = false;
  unsigned threads = 0;
  int smem_bytes = 0;
  int cluster_size() const { return cluster_m * cluster_n; }
};
template <device::Sm90GemmConfig C>
GemmTile gemm_tile(const C& c, int smem_bytes) {
  return {c.block_m,
          c.block_n,
          c.cluster_m,
          c.cluster_n,
          device::num_math_wgs(c),
          device::d_swizzle_bytes(c),
          device::out_elem_bytes(c),
          device::reduces_from_registers(c),
          unsigned(device::num_threads(c)),
          smem_bytes};
}

// Batches of a batched GEMM's operand or output: `count` matrices `stride` elements apart, through a 3-D map (the
// batch its outermost coordinate: scheduler/sm90_batched_scheduler.cuh); count 0: one matrix, a 2-D map.
struct Batches {
  int64_t count = 0, stride = 0;
};

// A K-major operand [rows, k] of t's dtype (row stride t.stride(0) elements): boxes of one 128-byte swizzled row of K
// (128 FP8 / 64 BF16 elements) x box_rows, as a WGMMA operand tile in shared memory takes it.
device::TmaDescriptor operand_map(const TensorView& t, int64_t rows, int64_t k, uint32_t box_rows, const char* op,
                                  Batches batches = {});
// An MN-major operand [rows, k] (rows contiguous, K stride t.stride(1) elements; 16-bit types, whose WGMMA reads it
// as it is): boxes of 64 rows (one 128-byte swizzled row) x one k-block of k_block K-rows, which the producer stacks
// along the rows (collective/sm90_operands.cuh: Sm90OperandTileLoad).
device::TmaDescriptor mn_major_operand_map(const TensorView& t, int64_t rows, int64_t k, uint32_t k_block,
                                           const char* op, Batches batches = {});
// tma_a and tma_b of a config (A [m, k], B [n, k]; a shared operand's box is half the tile), each K-major or
// MN-major (a_k_major, b_k_major: 16-bit types only); with a_tail (K-major A), A's last tile row where M leaves it
// partly empty and A is not shared loads from tma_a_tail, a box of M's rows rounded up to 8 (a_tail_rows), and tma_a
// is encoded only where M has a whole tile row. a_batches / b_batches: 3-D maps of batched operands (no tail).
void set_operand_maps(device::Sm90GemmParams& p, const GemmTile& tile, const TensorView& a, int64_t m,
                      const TensorView& b, int64_t n, int64_t k, bool a_tail, const char* op, bool a_k_major = true,
                      bool b_k_major = true, Batches a_batches = {}, Batches b_batches = {});
// tma_d of a config: D [rows, cols] of d's dtype in boxes of one swizzle atom of columns x a math warpgroup's rows,
// as the epilogue stages its tile.
device::TmaDescriptor d_map(const GemmTile& tile, const TensorView& d, int64_t rows, int64_t cols, const char* op,
                            Batches batches = {});

// MN-major TMA-aligned FP32 scales [rows, sf_k] (element (r, j) at r + j * sf.stride(1)): a box of box_rows scales of
// one k-block.
device::TmaDescriptor mn_major_scale_map(const TensorView& sf, int64_t rows, int64_t sf_k, uint32_t box_rows,
                                         const char* op);
// Row-major FP32 scales [rows, sf_k] with row stride `ld` elements (16-byte rows): a box of chunk_k k-blocks of
// box_rows rows.
device::TmaDescriptor row_scale_chunk_map(const TensorView& sf, int64_t rows, int64_t sf_k, int64_t ld, uint32_t chunk_k,
                                          uint32_t box_rows, const char* op);

// What every SM90 GEMM op sets alike from its problem and choice: the schedule's m, n, k and raster band, D by pointer
// (d's data and row stride) where the config reduces from registers, and split-K's partials and tile counters (from a
// runtime::Workspace) where it splits.
void set_gemm_schedule(device::Sm90GemmParams& p, const GemmTile& tile, int k_splits, int64_t m, int64_t n, int64_t k,
                       int raster_band, const TensorView& d, void* partials, void* tile_counters);

// D = C where C is distinct from D (copy_c), or zeros where there is no C (both [rows, cols] views) (a kernel then adds into D or K is 0),
// stream-ordered.
void prefill_output(const TensorView& d, const TensorView* c, bool copy_c, cudaStream_t stream);

// `choice` (a family's heuristic pick) when some config fits the problem (num_tiles > 0), else Error(kUnsupported):
// "<op>: no kernel configuration fits <describe_problem()>" (described only then: a warm call renders no text).
template <class Choice, class Describe>
const Choice& fitting(const char* op, const Choice& choice, Describe&& describe_problem) {
  if (choice.num_tiles == 0) {
    throw Error(ErrorKind::kUnsupported, std::string(op) + ": no kernel configuration fits " + describe_problem());
  }
  return choice;
}

// Split-K's scratch for a config of `tile` split k_splits ways over D [m, n]: whole tiles of FP32 partials and one
// counter per tile (zero between calls: the kernel resets its own); none without splits.
struct SplitKScratch {
  size_t counter_bytes = 0, partial_bytes = 0;
};
SplitKScratch splitk_scratch(const GemmTile& tile, int k_splits, int64_t m, int64_t n);

// A persistent kernel's grid: num_sms CTAs less those a cluster cannot pair, capped to the CTAs that can be resident
// at once (with clusters, GPC boundaries may leave fewer slots than SMs; a second wave would deadlock nothing but run
// the persistent loop twice as long).
struct PersistentLaunch {
  int num_sms = 0;
  int cluster = 1;
  unsigned threads = 0;
  int smem_bytes = 0;
  int device = -1;
};
void launch_persistent(const jit::LoadedKernel& kernel, const PersistentLaunch& launch, const void* params,
                       cudaStream_t stream);
// A GEMM kernel of `tile` on num_sms SMs of `device`.
inline void launch_gemm(const jit::LoadedKernel& kernel, const GemmTile& tile, int num_sms, const void* params,
                        int device, cudaStream_t stream) {
  launch_persistent(kernel, {num_sms, tile.cluster_size(), tile.threads, tile.smem_bytes, device}, params, stream);
}

}  // namespace hopgemm::api::sm90
