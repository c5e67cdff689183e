#pragma once
// Compile-time facts of one GEMM kernel that more than one collective needs: roles, registers, the tile geometry, the
// shared-memory carve-up, the bytes and arrivals of a stage. Derived from the family's config (the fields every family
// declares, kernels/sm90_gemm_types.cuh), its operand policy (collective/sm90_operands.cuh) and its scale policy
// (FP8: collective/sm90_fp8_scales.cuh), which adds its own bytes, arrivals and shared memory to a stage's.
//
// A scale policy Scales provides:
//   Params                     the kernel's parameter struct (Sm90GemmParams + the scales' own)
//   kSmemBytes, kBarrierBytes  its regions inside the carve-up (Sm90GemmSmem::scales / scale_barriers)
//   kStageTxBytes              bytes its TMA loads bring into a stage
//   kFullArrivals, kEmptyArrivals  arrivals its loaders / readers add to a stage's full / empty barrier
//   kReadersArrive             every math thread arrives on its CTA's empty barrier after reading a stage's scales
//   kProducerWarps             producer warps that load for it beside warp 0 (the others exit at once)
//   kPromotes, kPromoteOverlap the mainloop promotes each k-block (and how: its schedules), or accumulates
//   Storage, Loader, Reader    its shared memory, its producer side and its math threads' side

#include "hopgemm/device/common.cuh"
#include "hopgemm/device/epilogue/sm90_column_map.cuh"
#include "hopgemm/device/kernels/sm90_gemm_types.cuh"

namespace hopgemm::device::collective {

// ColumnsT: the epilogue's column map (epilogue/sm90_column_map.cuh), the identity unless the family's config skips
// columns of D.
template <auto kConfig, class OperandsT, class ScalesT, class ColumnsT = epilogue::Sm90IdentityColumns>
  requires Sm90GemmConfig<decltype(kConfig)>
struct Sm90GemmTraits {
  using Operands = OperandsT;
  using Scales = ScalesT;
  using Columns = ColumnsT;
  using Params = typename Scales::Params;
  static constexpr int kBlockM = kConfig.block_m, kBlockN = kConfig.block_n, kBlockK = Operands::kBlockK;
  static constexpr int kStages = kConfig.num_stages;
  static constexpr int kMathWgs = num_math_wgs(kConfig);
  static constexpr int kMathThreads = kMathWgs * 128;
  static constexpr int kWgRows = kBlockM / kMathWgs;        // rows per math warpgroup: 64 or 128
  static constexpr int kWaves = waves_per_wg(kConfig);       // m64 wgmma row blocks per math warpgroup
  static constexpr int kClusterSize = cluster_size(kConfig);
  static constexpr bool kMulticastA = kConfig.cluster_n == 2, kMulticastB = kConfig.cluster_m == 2;
  static constexpr int kSplits = kConfig.k_splits;
  static constexpr int kGrouping = kConfig.grouping;
  // B's groups as the batches of a 3-D map (its outermost coordinate), each group's tile at its columns inside the
  // group: an M-grouped GEMM's MN-major B ([G, N, K], N contiguous), whose groups one 2-D map cannot stack along N as
  // it stacks a K-major B's ([G x N, K]).
  static constexpr bool kBGroupsBatched =
      !Operands::LoadB::kIsKMajor && (kGrouping == kGroupingMIds || kGrouping == kGroupingMRanges);
  // The epilogue: D's dtype, accumulation, staging swizzle and passes, D added from registers.
  static constexpr bool kStoresFp32 = stores_fp32(kConfig), kAccumulate = kConfig.accumulate == 1;
  static constexpr int kDSwizzleBytes = d_swizzle_bytes(kConfig), kDPasses = kConfig.d_passes;
  static constexpr bool kDInStage = kConfig.d_in_stage == 1;
  static constexpr bool kReducesFromRegisters = reduces_from_registers(kConfig);
  static constexpr Sm90TileGeometry kGeometry{kBlockM, kBlockN, kBlockK, Operands::kElemBytes,
                                              kConfig.cluster_m, kConfig.cluster_n, kSplits};
  static constexpr Sm90GemmSmem kSmem = gemm_smem_layout(kConfig, Scales::kSmemBytes, Scales::kBarrierBytes);

  // setmaxnreg: the increase waits for registers the CTA got at launch. Two math warpgroups: 168 x 384 at launch,
  // 40 x 128 + 232 x 256 = 64512 exactly, so these move together. One: 248 x 256 at launch, so the producer can
  // keep 64 (row-major sfa staging needs them with split-K). Three: 128 x 512; 40 x 128 + 152 x 384 = 63488.
  static constexpr int kProducerRegs = kMathWgs == 1 ? 64 : 40;
  static constexpr int kConsumerRegs = kMathWgs == 1 ? 248 : kMathWgs == 2 ? 232 : 152;

  // Bytes TMA brings into a stage.
  static constexpr u32 kTxBytes = kSmem.a_stage + kSmem.b_stage + Scales::kStageTxBytes;
  // Stage barrier arrivals. full: the producer's expect_tx, + the scale loaders'. empty: one per math warp of every
  // CTA in the cluster (multicast writes into both CTAs), + the scale readers'.
  static constexpr u32 kFullArrivals = 1 + Scales::kFullArrivals;
  static constexpr u32 kEmptyArrivals = kClusterSize * kMathWgs * 4 + Scales::kEmptyArrivals;
};

}  // namespace hopgemm::device::collective
