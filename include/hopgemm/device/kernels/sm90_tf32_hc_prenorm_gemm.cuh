#pragma once
// SM90 hyper-connection pre-norm GEMM (DeepGEMM's tf32_hc_prenorm_gemm): D = A . B^T in TF32 and the squared sum of
// each row of A, per K split. Contract: kernels/sm90_tf32_hc_prenorm_gemm_types.cuh.

#include "hopgemm/device/common.cuh"
#include "hopgemm/device/kernels/sm90_tf32_hc_prenorm_gemm_types.cuh"
#include "hopgemm/device/mma/sm90_smem_desc.cuh"
#include "hopgemm/device/ptx/fence.cuh"
#include "hopgemm/device/ptx/griddepcontrol.cuh"
#include "hopgemm/device/ptx/mbarrier.cuh"
#include "hopgemm/device/ptx/setmaxnreg.cuh"
#include "hopgemm/device/ptx/tma.cuh"
#include "hopgemm/device/ptx/wgmma.cuh"
#include "hopgemm/device/ptx/wgmma_tf32.cuh"

namespace hopgemm::device {

template <Sm90HcPrenormConfig kConfig>
__global__ void __launch_bounds__(kHcThreads, 1)
    sm90_tf32_hc_prenorm_gemm_kernel(const __grid_constant__ Sm90HcPrenormParams params) {
  static_assert(is_valid(kConfig), "invalid Sm90HcPrenormConfig");
  constexpr int kStages = kConfig.num_stages, kBlockN = kConfig.block_n;
  constexpr u32 kAStage = hc_a_stage_bytes(), kBStage = hc_b_stage_bytes(kConfig);
  constexpr u32 kBHalf = kBStage / 2;  // B's 32 K (128 bytes) of block_n rows: one TMA box, one swizzle span
  extern __shared__ __align__(1024) u8 smem[];
  const u32 smem_a = ptx::smem_addr(smem), smem_b = smem_a + kStages * kAStage;
  u64* const full = reinterpret_cast<u64*>(smem + kStages * (kAStage + kBStage));
  u64* const empty = full + kStages;
  const u32 warp = threadIdx.x / 32, lane = threadIdx.x % 32;

  // This CTA's 64 rows and K split: splits of whole k-blocks, the first (k_blocks % splits) one longer.
  const i32 m_block = static_cast<i32>(blockIdx.x) / params.num_splits;
  const i32 split = static_cast<i32>(blockIdx.x) % params.num_splits;
  const i32 k_blocks = ceil_div(params.k, kHcBlockK);
  const i32 per_split = k_blocks / params.num_splits, longer = k_blocks % params.num_splits;
  const i32 kb_begin = split * per_split + min(split, longer);
  const i32 num_kb = per_split + (split < longer ? 1 : 0);

  if (threadIdx.x == 128) {
    for (int s = 0; s < kStages; ++s) {
      ptx::mbarrier_init(full + s, 1);
      ptx::mbarrier_init(empty + s, 128);
    }
    ptx::fence_mbarrier_init_release_cluster();
  } else if (threadIdx.x == 160) {
    ptx::prefetch_tensormap(&params.tma_a);
    ptx::prefetch_tensormap(&params.tma_b);
  }
  __syncthreads();
  ptx::griddepcontrol_wait();

  if (warp >= 4) {
    // ---- producer: warp 4's lane 0 loads A [64, 64 K] and B [block_n, 64 K] per k-block ----------------------
    ptx::setmaxnreg_dec<40>();
    if (warp == 4 && lane == 0) {
      for (i32 i = 0; i < num_kb; ++i) {
        const int s = i % kStages;
        ptx::mbarrier_wait(empty + s, ((i / kStages) & 1) ^ 1);
        const u32 bar = ptx::smem_addr(full + s);
        const i32 k0 = (kb_begin + i) * kHcBlockK;
        ptx::mbarrier_arrive_expect_tx(full + s, kAStage + kBStage);
        ptx::cp_async_bulk_tensor_2d_g2s(smem_a + s * kAStage, &params.tma_a, k0, m_block * kHcBlockM, bar);
        ptx::cp_async_bulk_tensor_2d_g2s(smem_b + s * kBStage, &params.tma_b, k0, 0, bar);
        ptx::cp_async_bulk_tensor_2d_g2s(smem_b + s * kBStage + kBHalf, &params.tma_b, k0 + 32, 0, bar);
      }
    }
    ptx::griddepcontrol_launch_dependents();
    return;
  }

  // ---- math warpgroup: row r = 16 warp + lane / 4 of the block and r + 8; K columns t = lane % 4 and t + 4 of each
  // k8 slice ----------------------------------------------------------------------------------------------------------
  ptx::setmaxnreg_inc<232>();
  const u32 row = warp * 16 + lane / 4, t = lane % 4;
  float acc[kBlockN / 2];
#pragma unroll
  for (int i = 0; i < kBlockN / 2; ++i) acc[i] = 0.0f;
  float sqr0 = 0.0f, sqr1 = 0.0f;  // rows r and r + 8
  // A's TF32 fragments in two register sets: k-block i's are read from shared memory and converted while k-block
  // i - 1's WGMMAs still run on the other set (they read their A registers until they complete).
  u32 a[2][kHcBlockK / 8][4] = {};
  auto load_a = [&](u32 (&frag)[kHcBlockK / 8][4], int s) {
    // A's 16-byte chunk c (K 8c .. 8c + 7) of tile row r sits at chunk c ^ (r % 8) (TMA's 128-byte swizzle).
    const u16* a_stage = reinterpret_cast<const u16*>(smem + s * kAStage);
#pragma unroll
    for (int c = 0; c < kHcBlockK / 8; ++c) {
      const u16* upper = a_stage + row * 64 + ((c ^ (row % 8)) * 8);
      const u16* lower = upper + 8 * 64;
      const float x0 = __uint_as_float(u32(upper[t]) << 16), x1 = __uint_as_float(u32(lower[t]) << 16);
      const float x2 = __uint_as_float(u32(upper[t + 4]) << 16), x3 = __uint_as_float(u32(lower[t + 4]) << 16);
      sqr0 += x0 * x0 + x2 * x2;
      sqr1 += x1 * x1 + x3 * x3;
      frag[c][0] = __float_as_uint(x0);
      frag[c][1] = __float_as_uint(x1);
      frag[c][2] = __float_as_uint(x2);
      frag[c][3] = __float_as_uint(x3);
    }
  };
  auto issue_mma = [&](const u32 (&frag)[kHcBlockK / 8][4], int s) {
    ptx::wgmma_fence_operand(acc);
    ptx::wgmma_fence();
#pragma unroll
    for (int c = 0; c < kHcBlockK / 8; ++c) {
      // B's k8 slice c: 32 bytes into its 128-byte half (c / 4), K-major, 128-byte swizzle.
      const u32 b_addr = smem_b + s * kBStage + (c / 4) * kBHalf + (c % 4) * 32;
      ptx::WgmmaTf32RegA<kBlockN>::mma(acc, frag[c], mma::make_kmajor_sw128_desc(b_addr), 1);
    }
    ptx::wgmma_commit_group();
    ptx::wgmma_fence_operand(acc);
  };
  // One k-block: its A into set `set`, then the previous k-block's WGMMAs waited for and its stage released.
  auto step = [&](i32 i, int set) {
    const int s = i % kStages;
    ptx::mbarrier_wait(full + s, (i / kStages) & 1);
    load_a(a[set], s);
    ptx::wgmma_wait_group<0>();
    ptx::wgmma_fence_operand(a[set ^ 1]);  // the other set live until its WGMMAs are done: load_a kept off it
    if (i > 0) ptx::mbarrier_arrive(empty + (i - 1) % kStages);
    issue_mma(a[set], s);
  };
  i32 i = 0;
  for (; i + 1 < num_kb; i += 2) {  // two k-blocks a trip: each set's index a constant
    step(i, 0);
    step(i + 1, 1);
  }
  if (i < num_kb) step(i, 0);
  ptx::wgmma_wait_group<0>();
  if (num_kb > 0) ptx::mbarrier_arrive(empty + (num_kb - 1) % kStages);

  // ---- the squared sums (the four lanes of a row hold its columns t and t + 4) and D, both from registers ----------
  sqr0 += __shfl_xor_sync(0xffffffffu, sqr0, 1);
  sqr0 += __shfl_xor_sync(0xffffffffu, sqr0, 2);
  sqr1 += __shfl_xor_sync(0xffffffffu, sqr1, 1);
  sqr1 += __shfl_xor_sync(0xffffffffu, sqr1, 2);
  const i32 r0 = m_block * kHcBlockM + static_cast<i32>(row);
  if (t == 0) {
    float* sqr_out = params.sqr_sum + static_cast<i64>(split) * params.m;
    if (r0 < params.m) sqr_out[r0] = sqr0;
    if (r0 + 8 < params.m) sqr_out[r0 + 8] = sqr1;
  }
  // acc[4g + {0,1}] = (row, 8g + 2t + {0,1}), acc[4g + {2,3}] = (row + 8, the same columns): N is a multiple of 8.
  float* d = params.d + static_cast<i64>(split) * params.d_split_stride;
#pragma unroll
  for (int g = 0; g < kBlockN / 8; ++g) {
    const i32 col = g * 8 + 2 * static_cast<i32>(t);
    if (col >= params.n) continue;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const i32 r = r0 + 8 * h;
      if (r < params.m) {
        *reinterpret_cast<float2*>(d + static_cast<i64>(r) * params.ldd + col) = make_float2(acc[4 * g + 2 * h],
                                                                                           acc[4 * g + 2 * h + 1]);
      }
    }
  }
}

}  // namespace hopgemm::device
