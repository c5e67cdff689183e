// einsum / fp8_einsum (include/hopgemm/einsum.hpp): each expression names which dimension of each tensor is the batch,
// the rows and K; the tensors become per-batch 2-D views with their batch strides (3-D descriptors), the problem a
// batched one of the BF16 (or FP8) GEMM family, run by that family's kernel with a batched scheduler
// (scheduler/sm90_batched_scheduler.cuh).
#include "hopgemm/einsum.hpp"

#include <cuda_runtime_api.h>

#include <string>
#include <utility>

#include "api/bf16_gemm_internal.hpp"
#include "api/fp8_scales.hpp"
#include "api/gemm_internal.hpp"
#include "api/sm90_launch.hpp"
#include "api/validate.hpp"
#include "heuristics/sm90_bf16_gemm.hpp"
#include "heuristics/sm90_fp8_gemm.hpp"
#include "hopgemm/error.hpp"
#include "hopgemm/runtime.hpp"
#include "runtime/workspace.hpp"

namespace hopgemm {
namespace {

using api::sm90::Batches;

// Dimensions `rows` and `cols` of rank-3 tensor t as a 2-D view, with its dimension `batch` as the batches.
struct BatchedView {
  TensorView view;
  Batches batches;
};
BatchedView batched_view(const TensorView& t, int batch, int rows, int cols) {
  TensorView v = t;
  v.rank = 2;
  v.shape[0] = t.shape[rows];
  v.shape[1] = t.shape[cols];
  v.strides[0] = t.strides[rows];
  v.strides[1] = t.strides[cols];
  v.shape[2] = v.shape[3] = v.strides[2] = v.strides[3] = 0;
  return {v, {t.shape[batch], t.strides[batch]}};
}

// The BF16 einsum forms: (A, B, D) as the GEMM sees them, with the grouping that runs them.
struct Bf16Einsum {
  int grouping = device::kGroupingBatched;
  int64_t m = 0, n = 0, k = 0, batches = 0;
  BatchedView a, b, d;
  bool b_k_major = true;
  bool copy_c = false, accumulate = false;
};

// Shapes, dtypes, unit strides and TMA alignment of one expression's tensors; the tensors as the GEMM takes them.
Bf16Einsum validate_bf16(const std::string& expr, const TensorView& a, const TensorView& b, const TensorView& d,
                         const TensorView* c) {
  api::Validator v("einsum");
  const bool summed = expr == "bmk,bnk->mn";
  if (!summed && expr != "bhr,hdr->bhd" && expr != "bhd,hdr->bhr") {
    v.unsupported("expression '" + expr + "' is not one of DeepGEMM's SM90 forms: bmk,bnk->mn, bhr,hdr->bhd, " +
                  "bhd,hdr->bhr");
  }
  for (auto [t, name] : {std::pair{&a, "a"}, {&b, "b"}, {&d, "d"}}) {
    v.on_device(*t, name);
    v.non_negative_strides(*t, name);
  }
  v.rank(a, "a", {3});
  v.rank(b, "b", {3});
  v.rank(d, "d", {summed ? 2 : 3});
  v.dtype(a, "a", {DType::kBFloat16});
  v.dtype(b, "b", {DType::kBFloat16});
  v.same_device(a, "a", b, "b");
  v.same_device(a, "a", d, "d");
  Bf16Einsum e;
  if (summed) {
    // a [s, m, k], b [s, n, k] -> d [m, n]: one GEMM, K running over every batch.
    v.dtype(d, "d", {DType::kBFloat16, DType::kFloat32});
    e.grouping = device::kGroupingBatchSum;
    e.batches = a.size(0);
    e.m = a.size(1);
    e.k = a.size(2);
    e.n = b.size(1);
    v.shape(b, "b", {e.batches, e.n, e.k});
    v.shape(d, "d", {e.m, e.n});
    e.a = batched_view(a, 0, 1, 2);
    e.b = batched_view(b, 0, 1, 2);
    e.d = {d, {}};
    if (c != nullptr) {
      e.copy_c = v.dense_accumulator(*c, d, a, e.m, e.n);
      e.accumulate = true;
    }
  } else {
    if (c != nullptr) v.fail("c", "is taken only by 'bmk,bnk->mn' (DeepGEMM's " + expr + " has no C)");
    v.dtype(d, "d", {DType::kBFloat16});
    e.batches = a.size(1);  // h
    e.m = a.size(0);        // b
    e.k = a.size(2);        // r, or d for bhd,hdr->bhr
    if (expr == "bhr,hdr->bhd") {
      e.n = b.size(1);
      v.shape(b, "b", {e.batches, e.n, e.k});
      e.b = batched_view(b, 0, 1, 2);  // [d, r] per head, K-major
    } else {
      e.n = b.size(2);
      v.shape(b, "b", {e.batches, e.k, e.n});
      e.b = batched_view(b, 0, 2, 1);  // [r, d] per head, read MN-major
      e.b_k_major = false;
    }
    v.shape(d, "d", {e.m, e.batches, e.n});
    e.a = batched_view(a, 1, 0, 2);
    e.d = batched_view(d, 1, 0, 2);
  }
  for (auto [t, name] : {std::pair{&a, "a"}, {&b, "b"}, {&d, "d"}}) v.inner_contiguous(*t, name);
  const bool fp32_out = d.dtype == DType::kFloat32;
  if (e.k % 8 != 0) v.fail("a", "must have K a multiple of 8 (TMA rows of 16 bytes), got K = " + std::to_string(e.k));
  if (e.n % (fp32_out ? 4 : 8) != 0) {
    v.fail("d", std::string("must have N a multiple of ") + (fp32_out ? "4 (float32" : "8 (bfloat16") +
                    " rows of 16 bytes), got N = " + std::to_string(e.n));
  }
  if (e.m > INT32_MAX || e.n > INT32_MAX || e.k > INT32_MAX || e.batches > INT32_MAX) {
    v.fail("a", "has a dimension beyond 2^31 - 1");
  }
  if (e.m > 0 && e.n > 0 && e.batches > 0) {
    if (e.k > 0) {
      v.tma_aligned(a, "a");
      v.tma_aligned(b, "b");
    }
    v.tma_aligned(d, "d");
    v.no_overlap(d, "d", a, "a");
    v.no_overlap(d, "d", b, "b");
  }
  return e;
}

void run_bf16_einsum(const std::string& expr, const TensorView& a, const TensorView& b, const TensorView& d,
                     const TensorView* c, cudaStream_t stream) {
  constexpr const char* op = "einsum";
  const Bf16Einsum e = validate_bf16(expr, a, b, d, c);
  if (e.m == 0 || e.n == 0) return;
  const bool fp32_out = d.dtype == DType::kFloat32;
  if (e.k == 0 || e.batches == 0) {  // an empty sum: D = C, or zeros
    if (e.grouping == device::kGroupingBatchSum) {
      api::sm90::prefill_output(d, c, e.copy_c, stream);
      return;
    }
    for (int64_t h = 0; h < e.batches; ++h) {  // each head's [m, n] slice of D
      TensorView slice = e.d.view;
      slice.data = static_cast<char*>(d.data) + h * e.d.batches.stride * d.element_size();
      api::sm90::prefill_output(slice, nullptr, false, stream);
    }
    return;
  }
  const heuristics::Bf16GemmProblem problem = heuristics::make_bf16_batched_problem(
      e.grouping, e.m, e.n, e.k, e.batches, e.b_k_major, fp32_out ? device::kOutFp32 : device::kOutBf16, e.accumulate,
      get_num_sms(a.device), get_tc_util());
  const heuristics::Bf16GemmChoice& choice = api::bf16_grouped_choice(op, problem);
  const device::Sm90Bf16GemmConfig& cfg = choice.config;
  const api::sm90::GemmTile tile = api::sm90::gemm_tile(cfg, device::smem_bytes(cfg));
  // Everything that may refuse inside a capture (the kernel load, the workspace) comes before anything is enqueued.
  const jit::LoadedKernel& kernel = api::bf16_gemm_kernel(cfg, op, stream);
  const auto scratch = api::sm90::splitk_scratch(tile, cfg.k_splits, e.m, e.n);
  const runtime::Workspace workspace(scratch.counter_bytes, scratch.partial_bytes, stream, op);
  device::Sm90Bf16GemmParams params{};
  api::sm90::set_operand_maps(params, tile, e.a.view, e.m, e.b.view, e.n, e.k, /*a_tail=*/false, op, true, e.b_k_major,
                              e.a.batches, e.b.batches);
  params.tma_d = api::sm90::d_map(tile, e.d.view, e.m, e.n, op, e.d.batches);
  api::sm90::set_gemm_schedule(params, tile, cfg.k_splits, e.m, e.n, e.k, choice.launch.raster_band, d,
                               workspace.partials(), workspace.counters());
  params.schedule.num_groups = static_cast<int>(e.batches);
  if (e.copy_c) api::sm90::prefill_output(d, c, e.copy_c, stream);
  api::bf16_gemm_launch(kernel, choice, &params, a.device, stream);
}

// fp8_einsum "bhr,hdr->bhd": validation, the batched 1D2D problem, its params and launch.
void run_fp8_einsum(const std::string& expr, const TensorView& a, const TensorView& sfa, const TensorView& b,
                    const TensorView& sfb, const TensorView& d, const TensorView* c, const std::array<int, 3>& recipe,
                    cudaStream_t stream) {
  constexpr const char* op = "fp8_einsum";
  api::Validator v(op);
  if (expr == "bhd,hdr->bhr" || expr == "bhd,bhr->hdr") {
    v.unsupported("expression '" + expr + "' is one of DeepGEMM's SM100 forms (its FP8 MN-major operands); on SM90 " +
                  "fp8_einsum takes 'bhr,hdr->bhd'");
  }
  if (expr != "bhr,hdr->bhd") v.unsupported("expression '" + expr + "' is not DeepGEMM's SM90 form 'bhr,hdr->bhd'");
  for (auto [t, name] : {std::pair{&a, "a"}, {&sfa, "sfa"}, {&b, "b"}, {&sfb, "sfb"}, {&d, "d"}}) {
    v.on_device(*t, name);
    v.rank(*t, name, {3});
    v.non_negative_strides(*t, name);
  }
  v.dtype(a, "a", {DType::kFloat8E4M3});
  v.dtype(b, "b", {DType::kFloat8E4M3});
  v.dtype(sfa, "sfa", {DType::kFloat32});
  v.dtype(sfb, "sfb", {DType::kFloat32});
  v.dtype(d, "d", {DType::kBFloat16, DType::kFloat32});
  if (c != nullptr) v.fail("c", "is not taken by fp8_einsum on SM90 (its 1D2D kernel stores D; DeepGEMM's as well)");
  api::resolve_recipe(v, recipe, device::kRecipe1D2D, {device::kRecipe1D2D}, " by fp8_einsum");
  // Per head h: M = b, N = d, K = r.
  const int64_t batches = a.size(1), m = a.size(0), k = a.size(2), n = b.size(1);
  const int64_t sf_k = device::ceil_div<int64_t>(k, 128);
  v.shape(b, "b", {batches, n, k});
  v.shape(d, "d", {m, batches, n});
  v.shape(sfa, "sfa", {m, batches, sf_k});
  v.shape(sfb, "sfb", {batches, device::ceil_div<int64_t>(n, 128), sf_k});
  for (auto [t, name] : {std::pair{&a, "a"}, {&b, "b"}, {&d, "d"}, {&sfa, "sfa"}}) v.inner_contiguous(*t, name);
  for (auto [t, name] : {std::pair{&b, "b"}, {&sfa, "sfa"}, {&sfb, "sfb"}, {&d, "d"}}) v.same_device(a, "a", *t, name);
  const bool fp32_out = d.dtype == DType::kFloat32;
  if (k % 16 != 0) v.fail("a", "must have K a multiple of 16 (TMA rows of 16 bytes), got K = " + std::to_string(k));
  if (n % (fp32_out ? 4 : 8) != 0) {
    v.fail("d", std::string("must have N a multiple of ") + (fp32_out ? "4 (float32" : "8 (bfloat16") +
                    " rows of 16 bytes), got N = " + std::to_string(n));
  }
  if (m > INT32_MAX || n > INT32_MAX || k > INT32_MAX || batches > INT32_MAX) v.fail("a", "has a dimension beyond 2^31 - 1");
  if (m == 0 || n == 0 || batches == 0) return;
  if (k == 0) v.fail("a", "must have K > 0");
  v.tma_aligned(a, "a");
  v.tma_aligned(b, "b");
  v.tma_aligned(d, "d");
  for (auto [t, name] : {std::pair{&a, "a"}, {&b, "b"}, {&sfa, "sfa"}, {&sfb, "sfb"}}) v.no_overlap(d, "d", *t, name);

  heuristics::Fp8GemmProblem problem = heuristics::make_m_grouped_problem(
      device::kGroupingBatched, m, n, k, batches, /*sfa_k_major=*/1, 0, get_num_sms(a.device), get_tc_util());
  problem.out_dtype = fp32_out ? device::kOutFp32 : device::kOutBf16;
  const heuristics::Fp8GemmChoice choice = api::fp8_grouped_choice(op, problem);
  const device::Sm90Fp8GemmConfig& cfg = choice.config;
  const api::sm90::GemmTile tile = api::sm90::gemm_tile(cfg, device::smem_bytes(cfg));
  const jit::LoadedKernel& kernel = api::fp8_gemm_kernel(cfg, op, stream);
  const BatchedView va = batched_view(a, 1, 0, 2), vb = batched_view(b, 0, 1, 2), vd = batched_view(d, 1, 0, 2);
  device::Sm90Fp8GemmParams params{};
  api::sm90::set_operand_maps(params, tile, va.view, m, vb.view, n, k, /*a_tail=*/false, op, true, true, va.batches,
                              vb.batches);
  params.tma_d = api::sm90::d_map(tile, vd.view, m, n, op, vd.batches);
  // The scales per head: sfa [b, R] row-major (the staging warps read it, offset by the head), sfb's 128x128 blocks
  // [ceil(d/128), R] of each head.
  const BatchedView vsfa = batched_view(sfa, 1, 0, 2);
  const api::RowScales sfa_rows{vsfa.view, m, sf_k, /*by_pointer=*/true, sfa.stride(0), 1};
  const api::BlockScales sfb_blocks{sfb.data, sfb.stride(1), sfb.stride(2), sfb.stride(0)};
  api::set_fp8_scales(params.scales, cfg, sfa_rows, nullptr, &sfb_blocks, op);
  params.scales.sfa_group_stride = sfa.stride(1);
  api::sm90::set_gemm_schedule(params, tile, cfg.k_splits, m, n, k, choice.launch.raster_band, vd.view, nullptr,
                               nullptr);
  params.schedule.num_groups = static_cast<int>(batches);
  api::fp8_gemm_launch(kernel, choice, &params, a.device, stream);
}

}  // namespace

void fp8_einsum(const std::string& expr, const TensorView& a, const TensorView& sfa, const TensorView& b,
                const TensorView& sfb, const TensorView& d, const TensorView* c, const std::array<int, 3>& recipe,
                cudaStream_t stream) {
  run_fp8_einsum(expr, a, sfa, b, sfb, d, c, recipe, stream);
}

void einsum(const std::string& expr, const TensorView& a, const TensorView& b, const TensorView& d, const TensorView* c,
            cudaStream_t stream) {
  run_bf16_einsum(expr, a, b, d, c, stream);
}

}  // namespace hopgemm
