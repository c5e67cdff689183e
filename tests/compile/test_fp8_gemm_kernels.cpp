// FP8 GEMM kernel variants beyond the suites' picks (every consumer schedule, split-K, B scales in registers, scale
// chunks, three math warpgroups) compile for sm_90a under NVRTC without spills; one NVCC compile checks the second
// backend. The suites' own kernels are compiled by test_precompile_cli.cpp (through `hopgemm precompile`), the picks
// over a grid of shapes by tests/slow/test_shape_grid_compile.cpp.
#include <gtest/gtest.h>

#include <cstdio>
#include <vector>

#include "api/gemm_sources.hpp"
#include "heuristics/sm90_fp8_gemm.hpp"
#include "compile/compiled_kernel_checks.hpp"
#include "jit/compiler.hpp"

namespace hopgemm {
namespace {

using testing::expect_clean;

// A config of `recipe` with its output as the op has it: 1D2D -> BF16 D, 1D1D -> FP32 D += A B^T.
device::Sm90Fp8GemmConfig recipe_config(int recipe) {
  device::Sm90Fp8GemmConfig c;
  c.recipe = recipe;
  c.out_dtype = recipe == device::kRecipe1D1D ? device::kOutFp32 : device::kOutBf16;
  c.accumulate = recipe == device::kRecipe1D1D;
  return c;
}

// Each config is valid and its kernel compiles under NVRTC without spills.
void expect_configs_compile(const std::vector<device::Sm90Fp8GemmConfig>& configs) {
  std::vector<jit::KernelSource> sources;
  for (const auto& c : configs) {
    ASSERT_TRUE(device::is_valid(c)) << c.block_m << "x" << c.block_n;
    sources.push_back(api::render_sm90_fp8_gemm(c));
  }
  testing::compile_all_clean(sources);
}

TEST(Fp8GemmKernels, SplitKVariantsCompileWithNvrtc) {
  // The split-K path with both sfa layouts with both recipes and the 2-warpgroup tile (split-K takes no cluster).
  std::vector<device::Sm90Fp8GemmConfig> configs;
  for (int recipe : {device::kRecipe1D2D, device::kRecipe1D1D}) {
    for (int sfa_k_major : {0, 1}) {
      device::Sm90Fp8GemmConfig c = recipe_config(recipe);
      c.block_m = 128;
      c.block_n = 64;
      c.sfa_k_major = sfa_k_major;
      c.k_splits = 3;
      c.num_stages = 4;
      configs.push_back(c);
    }
  }
  expect_configs_compile(configs);
}

TEST(Fp8GemmKernels, ConsumerSchedulesCompileWithNvrtc) {
  // Every consumer schedule, whether or not the heuristics pick it today: waves pipelined (1D1D 256x80),
  // warpgroup turns (128x128), the next block overlapped (1D1D 128x128), D in the last stage (256x128).
  struct Variant {
    int recipe, block_m, block_n, num_stages, promote_overlap, d_in_stage, d_passes;
  };
  const Variant variants[] = {
      {device::kRecipe1D1D, 256, 80, 3, 1, 0, 1},
      {device::kRecipe1D2D, 128, 128, 5, 0, 0, 1},
      {device::kRecipe1D1D, 128, 128, 4, 1, 0, 1},
      {device::kRecipe1D2D, 256, 128, 4, 0, 1, 2},
  };
  std::vector<device::Sm90Fp8GemmConfig> configs;
  for (const auto& v : variants) {
    device::Sm90Fp8GemmConfig c = recipe_config(v.recipe);
    c.block_m = v.block_m;
    c.block_n = v.block_n;
    c.num_stages = v.num_stages;
    c.cluster_n = 2;
    c.promote_overlap = v.promote_overlap;
    c.d_in_stage = v.d_in_stage;
    c.d_passes = v.d_passes;
    configs.push_back(c);
  }
  expect_configs_compile(configs);
}

TEST(Fp8GemmKernels, FusedSplitKCompilesWithNvrtc) {
  // split-K with the reduction in the kernel: small-M tiles of both recipes, two-warpgroup tiles up to the register
  // bound of is_valid (1D2D 128x160, 1D1D 256x104), and a width whose float4 chunks do not split into groups of 8
  // (64x80: 10 chunks per thread).
  struct Variant {
    int recipe, block_m, block_n, k_splits, promote_overlap;
  };
  const Variant variants[] = {
      {device::kRecipe1D2D, 64, 64, 4, 1},
      {device::kRecipe1D2D, 64, 80, 8, 1},
      {device::kRecipe1D2D, 128, 64, 3, 0},
      {device::kRecipe1D1D, 64, 128, 2, 1},
      {device::kRecipe1D2D, 128, 160, 2, 0},
      {device::kRecipe1D1D, 256, 104, 2, 0},
      {device::kRecipe1D2D, 256, 128, 2, 0},  // the largest tiles: the last split sums in place
      {device::kRecipe1D2D, 128, 192, 4, 0},
  };
  std::vector<device::Sm90Fp8GemmConfig> configs;
  for (const auto& v : variants) {
    device::Sm90Fp8GemmConfig c = recipe_config(v.recipe);
    c.block_m = v.block_m;
    c.block_n = v.block_n;
    c.k_splits = v.k_splits;
    c.promote_overlap = v.promote_overlap;
    c.num_stages = heuristics::max_stages(c);
    configs.push_back(c);
  }
  expect_configs_compile(configs);
}

TEST(Fp8GemmKernels, BScalesInRegistersCompileWithNvrtc) {
  // sfb_regs (1D2D B scales held by the math warps) with each consumer schedule: one wave (256x128, D in its last
  // stage; 128x192), warpgroup turns (128x128), the overlapped next block (64x128), fused split-K (256x80, 128x160,
  // and the largest tiles, 256x128 (also with D in its last stage) and 128x192), a cluster.
  struct Variant {
    int block_m, block_n, promote_overlap, d_in_stage, d_passes, k_splits, cluster_n;
  };
  const Variant variants[] = {
      {256, 128, 0, 1, 2, 1, 2}, {128, 192, 0, 0, 1, 1, 1}, {128, 128, 0, 0, 1, 1, 2},
      {64, 128, 1, 0, 1, 1, 1},  {64, 64, 1, 0, 1, 4, 1},  {256, 80, 0, 0, 1, 2, 1},
      {128, 160, 0, 0, 1, 2, 1}, {256, 128, 0, 0, 1, 2, 1}, {128, 192, 0, 0, 1, 2, 1},
      {256, 128, 0, 1, 2, 2, 1},  // fused split-K with D staged in the last stage
  };
  std::vector<device::Sm90Fp8GemmConfig> configs;
  for (const auto& v : variants) {
    device::Sm90Fp8GemmConfig c = recipe_config(device::kRecipe1D2D);
    c.block_m = v.block_m;
    c.block_n = v.block_n;
    c.promote_overlap = v.promote_overlap;
    c.d_in_stage = v.d_in_stage;
    c.d_passes = v.d_passes;
    c.k_splits = v.k_splits;
    c.cluster_n = v.cluster_n;
    c.sfb_regs = 1;
    c.num_stages = heuristics::max_stages(c);
    configs.push_back(c);
  }
  expect_configs_compile(configs);
}

TEST(Fp8GemmKernels, ScaleChunksCompileWithNvrtc) {
  // sf_chunks (row-major per-row scales by TMA into a chunk ring) with each consumer schedule. 1D1D: one wave with
  // the column scales in registers (128x160) and read during the promotion (256x128, D in its last stage), the
  // pipelined waves (256x88, a cluster), the overlapped next block (128x128), sfb alone chunked (sfa MN-major),
  // 256-row tiles with both chunked (no producer staging left to run out of registers), 64-row tiles (one math
  // warpgroup, the overlapped next block) alone and with fused split-K. 1D2D (sfa only): turns, the overlapped next
  // block with fused split-K and B scales in registers, D in the last stage.
  struct Variant {
    int recipe, block_m, block_n, promote_overlap, d_in_stage, k_splits, cluster_n, sfa_k_major, sfb_regs;
  };
  const Variant variants[] = {
      {device::kRecipe1D1D, 128, 160, 0, 0, 1, 1, 1, 0}, {device::kRecipe1D1D, 256, 128, 0, 1, 1, 1, 1, 0},
      {device::kRecipe1D1D, 256, 88, 1, 0, 1, 2, 1, 0},  {device::kRecipe1D1D, 128, 128, 1, 0, 1, 1, 1, 0},
      {device::kRecipe1D1D, 128, 152, 0, 0, 1, 2, 0, 0}, {device::kRecipe1D1D, 256, 96, 1, 0, 1, 1, 1, 0},
      {device::kRecipe1D1D, 64, 128, 1, 0, 1, 1, 1, 0},  {device::kRecipe1D1D, 64, 64, 1, 0, 4, 1, 1, 0},
      {device::kRecipe1D2D, 128, 128, 0, 0, 1, 2, 1, 0}, {device::kRecipe1D2D, 64, 64, 1, 0, 4, 1, 1, 1},
      {device::kRecipe1D2D, 256, 128, 0, 1, 1, 2, 1, 1},
  };
  std::vector<device::Sm90Fp8GemmConfig> configs;
  for (const auto& v : variants) {
    device::Sm90Fp8GemmConfig c = recipe_config(v.recipe);
    c.block_m = v.block_m;
    c.block_n = v.block_n;
    c.promote_overlap = v.promote_overlap;
    c.d_in_stage = v.d_in_stage;
    if (v.d_in_stage == 1) c.d_passes = c.block_n * device::out_elem_bytes(c) / 128;
    c.k_splits = v.k_splits;
    c.cluster_n = v.cluster_n;
    c.sfa_k_major = v.sfa_k_major;
    c.sfb_k_major = 1;
    c.sfb_regs = v.sfb_regs;
    c.sf_chunks = 1;
    c.num_stages = heuristics::max_stages(c);
    configs.push_back(c);
  }
  expect_configs_compile(configs);
}

TEST(Fp8GemmKernels, PairSharingWholeBTileCompilesWithNvrtc) {
  // A CTA pair sharing B whose half is not whole 8-row swizzle atoms (1D1D 128x152 on M, DeepGEMM's weight-gradient
  // tile): the first CTA loads and multicasts the whole B tile. Both sfb layouts (row-major: in chunks).
  std::vector<device::Sm90Fp8GemmConfig> configs;
  for (int sfb_k_major : {0, 1}) {
    device::Sm90Fp8GemmConfig c = recipe_config(device::kRecipe1D1D);
    c.block_m = 128;
    c.block_n = 152;
    c.cluster_m = 2;
    c.cluster_n = 1;
    c.promote_overlap = 0;
    c.sfb_k_major = sfb_k_major;
    c.sf_chunks = sfb_k_major;
    c.num_stages = heuristics::max_stages(c);
    ASSERT_TRUE(device::pair_loads_whole_b(c));
    configs.push_back(c);
  }
  expect_configs_compile(configs);
}

TEST(Fp8GemmKernels, ThreeMathWarpgroupsCompileWithNvrtc) {
  // block_m 192: three math warpgroups of 152 registers (one m64 wave each). 1D2D 128-wide with per-stage and
  // in-register B scales, turns, D in the last stage, row-major A scales staged by the producer warps; 1D1D
  // 96-wide with MN-major and chunked row-major scales.
  struct Variant {
    int recipe, block_n, d_in_stage, cluster_n, sfa_k_major, sfb_regs;
  };
  const Variant variants[] = {
      {device::kRecipe1D2D, 128, 0, 2, 0, 0}, {device::kRecipe1D2D, 128, 0, 1, 0, 1},
      {device::kRecipe1D2D, 128, 1, 2, 0, 1}, {device::kRecipe1D2D, 112, 0, 1, 1, 0},
      {device::kRecipe1D1D, 96, 0, 2, 0, 0},  {device::kRecipe1D1D, 96, 0, 1, 1, 0},
  };
  std::vector<device::Sm90Fp8GemmConfig> configs;
  for (const auto& v : variants) {
    device::Sm90Fp8GemmConfig c = recipe_config(v.recipe);
    c.block_m = 192;
    c.block_n = v.block_n;
    c.promote_overlap = 0;
    c.d_in_stage = v.d_in_stage;
    if (v.d_in_stage == 1) c.d_passes = c.block_n * device::out_elem_bytes(c) / 128;
    c.cluster_n = v.cluster_n;
    c.sfa_k_major = v.sfa_k_major;
    c.sfb_k_major = v.recipe == device::kRecipe1D1D ? v.sfa_k_major : 0;
    c.sf_chunks = v.recipe == device::kRecipe1D1D && v.sfa_k_major == 1 ? 1 : 0;
    c.sfb_regs = v.sfb_regs;
    c.num_stages = heuristics::max_stages(c);
    configs.push_back(c);
  }
  expect_configs_compile(configs);
}

TEST(Fp8GemmKernels, OneConfigCompilesWithNvcc) {
  const auto compiler = jit::make_nvcc_compiler();
  const auto s = testing::suite_gemm_sources().front();
  const auto k = compiler->compile(s, "");
  expect_clean(k, s);
  std::printf("NVCC compile %.2f s\n", k.compile_seconds);
}

}  // namespace
}  // namespace hopgemm
