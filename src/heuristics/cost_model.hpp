#pragma once
// The cost model every SM90 GEMM family shares. Its kernels are one skeleton: a persistent grid of one CTA per SM
// walking (tile, split) work units, optionally in CTA pairs that multicast a shared operand, with split-K fused into
// the epilogue. A candidate's time is the largest of its compute, HBM, L2-output and SM-ingress times, plus the
// launch and split-K's reduction. A family (sm90_fp8_gemm.cpp, ...) lists its candidate tiles, says what its kernel
// sustains on each (TileRates) and adds its own tie rules; the ranking and the shared tie rule live here.
// Pure: no CUDA calls. Figures are the H100 SXM's (132 SMs, HBM3), measured on the project's GPU unless noted.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace hopgemm::heuristics {

// Operand element types of the tensor cores.
enum class MmaDtype { kE4m3, kBf16 };
// Dense tensor-core peak in TFLOPS (datasheet): e4m3 1979, bf16 989.
double peak_tflops(MmaDtype dtype);
// Bytes per operand element.
int operand_bytes(MmaDtype dtype);

inline constexpr double kL2Bytes = 50.0 * 1024 * 1024;  // L2 capacity
// The L2's output rate over all SMs, a shared operand counted once per CTA pair (fitted on FP8 tune logs).
inline constexpr double kL2GBps = 9405.0;
// Predictions this close (relative) are a tie: the model cannot tell them apart.
inline constexpr double kModelTie = 0.005;

// Split-K candidates: only where the tiles fill at most this many waves (fewer tiles than SMs, or a short ragged
// last wave), each split at least two k-blocks (shorter units are all prologue and epilogue).
inline constexpr int kSplitKChoices[] = {2, 3, 4, 6, 8, 12, 16, 24, 32};
// Past kMaxShortSplits splits only where each split keeps kMinKBlocksPerWideSplit k-blocks and the tile is at least
// 128 x 128: a few output tiles over a very long K (einsum bmk,bnk->mn sums K over every batch). H200, 2026-11-28,
// 4096 x 256 x 256 x 256 (16384 k-blocks): 64 x 64 x 8 splits 515 us, 128 x 128 x 24 / 32 splits 467 / 441 us,
// 128 x 64 x 16 / 32 splits 562 / 712 us (the model alone preferred the last kind).
inline constexpr int kMaxShortSplits = 8;
inline constexpr int kMinKBlocksPerWideSplit = 16;
inline constexpr int kMinWideSplitTileArea = 128 * 128;
inline constexpr int kMaxWavesForSplitK = 2;
inline constexpr int kMinKBlocksPerSplit = 2;

// A GEMM as the model sees it: `groups` GEMMs of this shape, each with its own operands and output, in one launch
// (1 for a dense GEMM).
struct ModelGemm {
  int64_t m = 0, n = 0, k = 0;
  int groups = 1;
  MmaDtype dtype = MmaDtype::kE4m3;
  int out_bytes = 2;       // per element of D
  bool accumulate = false;  // D is read as well as written
  int num_sms = 132;
  int tc_util = 100;        // percent of the tensor-core peak the caller expects (set_tc_util)
};

// A candidate's work decomposition: the tile, the CTA pair (cluster_m = 2: two m-blocks share B; cluster_n = 2: two
// n-blocks share A) and the K splits. block_k is the K of one pipeline stage (a k-block).
struct ModelTile {
  int block_m = 128, block_n = 128, block_k = 128;
  int cluster_m = 1, cluster_n = 1;
  int k_splits = 1;
};

// What the family's kernel sustains on this tile.
struct TileRates {
  double mma_efficiency = 1.0;    // fraction of the per-SM tensor-core peak
  double k_block_floor_us = 0.0;  // a k-block takes at least this long, however small the tile
  double l2_gbps = kL2GBps;       // the L2's output rate left to the operands
  int math_wgs = 2;               // math warpgroups (each sums its own rows of the split-K partials)
};

struct Prediction {
  double us = 0.0;
  int64_t tiles = 0;  // real tiles
  int64_t waves = 0;  // rounds of units over the persistent grid
  bool dram_bound = false;  // the HBM term is the largest
};

// The persistent grid: every SM, less those a cluster cannot pair.
inline int grid_sms(int num_sms, int cluster_size) { return num_sms - num_sms % cluster_size; }

// Fraction of the tensor-core peak one warpgroup's 64 x block_n WGMMA (32 bytes of K per row, operands in shared
// memory) can reach: the tensor cores take block_n / 2 cycles, shared memory feeds (64 + block_n) x 32 bytes at
// 128 B per cycle.
double wgmma_smem_efficiency(int block_n);

Prediction predict(const ModelGemm& gemm, const ModelTile& tile, const TileRates& rates);

// Sorts `ranked` (anything with a `predicted_us`) fastest first. Within the model's tie the candidate listed
// earlier stays ahead: a family lists its candidates in the order it wants ties broken.
template <class Choice>
void sort_by_prediction(std::vector<Choice>& ranked) {
  std::stable_sort(ranked.begin(), ranked.end(), [](const Choice& x, const Choice& y) {
    return x.predicted_us < y.predicted_us * (1.0 - kModelTie);
  });
}

// How many candidates from the front of a sorted ranking are predicted within the tie of the front one and satisfy
// `also`: the span a family's tie rules may reorder.
template <class Choice, class Also>
size_t leading_ties(const std::vector<Choice>& ranked, Also&& also) {
  size_t n = 0;
  while (n < ranked.size() && ranked[n].predicted_us <= ranked.front().predicted_us * (1.0 + kModelTie) &&
         also(ranked[n])) {
    ++n;
  }
  return n;
}

}  // namespace hopgemm::heuristics
