// MoE grouped FP8 and BF16 GEMMs (include/hopgemm/grouped_gemm.hpp): validate -> problem -> config (memoised) -> kernel
// (cached) -> launch. This file is the validation and each layout's params; the choice, the descriptors, the scales
// and the launch are the FP8 family's and the SM90 kit's (gemm_internal.hpp, fp8_scales.hpp, sm90_launch.hpp). They
// run the FP8 GEMM kernel with a grouped scheduler (device/scheduler/sm90_m_group_*, sm90_k_grouped_scheduler.cuh):
// the kernel, its cache and its heuristics are the dense GEMM's.
#include "hopgemm/grouped_gemm.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <optional>
#include <span>
#include <string>

#include "api/bf16_gemm_internal.hpp"
#include "api/fp8_scales.hpp"
#include "api/gemm_internal.hpp"
#include "api/sm90_launch.hpp"
#include "api/validate.hpp"
#include "heuristics/sm90_fp8_gemm.hpp"
#include "hopgemm/error.hpp"
#include "hopgemm/layout.hpp"
#include "hopgemm/runtime.hpp"
#include "runtime/workspace.hpp"

namespace hopgemm {
namespace {

using device::Sm90Fp8GemmConfig;
using device::Sm90Fp8GemmParams;

std::atomic<int>& mk_alignment() {
  static std::atomic<int> alignment{128};
  return alignment;
}

// A view of `t` with its leading dimensions merged into rows: [rows, cols] with the row stride of dimension -2.
TensorView rows_view(const TensorView& t, int64_t rows) {
  TensorView v = t;
  v.rank = 2;
  v.shape[0] = rows;
  v.shape[1] = t.size(-1);
  v.strides[0] = t.stride(-2);
  v.strides[1] = t.stride(-1);
  return v;
}

std::string str(int64_t x) { return std::to_string(x); }

// x * y, saturated to INT64_MAX / INT64_MIN where it overflows: the checks compare hostile extents x strides (2^62 x
// 384) against each other, and a wrapped product could compare equal (signed overflow is UB besides). No valid
// problem's product comes near 2^63, so a saturated one always fails its check.
int64_t mul(int64_t x, int64_t y) {
  int64_t product = 0;
  if (__builtin_mul_overflow(x, y, &product)) return (x < 0) != (y < 0) ? INT64_MIN : INT64_MAX;
  return product;
}

// What every M-grouped op checks: A (of the family's operand dtype) with K-major rows, B [G, N, K] K-major with its
// groups stacked densely along N (or, where the op takes it, MN-major: N contiguous, its groups at any stride TMA
// takes), BF16 D with the rows of A.
struct MGroupedShape {
  int64_t rows = 0, n = 0, k = 0, groups = 0;  // rows: of A and D (M_sum, or G x M_max)
  bool b_k_major = true;                       // B's K contiguous; else its N (b_mn_major ops only)
};
MGroupedShape check_m_grouped(const api::Validator& v, const TensorView& a, const TensorView& b, const TensorView& d,
                              DType operand, bool b_mn_major = false) {
  for (auto [t, name] : {std::pair{&a, "a"}, {&b, "b"}, {&d, "d"}}) v.on_device(*t, name);
  v.dtype(a, "a", {operand});
  v.dtype(b, "b", {operand});
  v.dtype(d, "d", {DType::kBFloat16});
  v.rank(b, "b", {3});
  for (auto [t, name] : {std::pair{&a, "a"}, {&b, "b"}, {&d, "d"}}) v.non_negative_strides(*t, name);
  MGroupedShape s;
  s.groups = b.size(0);
  s.n = b.size(1);
  s.k = b.size(2);
  s.rows = a.rank == 3 ? mul(a.size(0), a.size(1)) : a.size(0);
  if (a.size(-1) != s.k) v.fail("a", "must have K = " + str(s.k) + " (b's last dimension), got shape " + api::shape_string(a));
  if (d.size(-1) != s.n) v.fail("d", "must have N = " + str(s.n) + " columns (b's size(1)), got shape " + api::shape_string(d));
  if (s.k > 1 && a.stride(-1) != 1) v.fail("a", "must be K-major (stride(-1) == 1) on SM90, got strides " + api::stride_string(a));
  // As DeepGEMM reads the major: K-major where stride(-1) == 1, else MN-major.
  s.b_k_major = s.k <= 1 || b.stride(2) == 1;
  if (!s.b_k_major && !b_mn_major) {
    v.fail("b", "must be K-major (stride(-1) == 1) on SM90, got strides " + api::stride_string(b));
  }
  if (!s.b_k_major && s.n > 1 && b.stride(1) != 1) {
    v.fail("b", "must be K-major (stride(-1) == 1) or MN-major (stride(1) == 1), got strides " + api::stride_string(b));
  }
  if (s.b_k_major && s.groups > 1 && b.stride(0) != mul(s.n, b.stride(1))) {
    v.fail("b", "must hold its groups densely along N (stride(0) == N * stride(1)), got strides " + api::stride_string(b));
  }
  // An MN-major B's groups are the batches of a 3-D tensor map, whose strides TMA takes positive.
  if (!s.b_k_major && s.groups > 1 && b.stride(0) == 0) {
    v.fail("b", "must hold its groups at a positive stride (stride(0) > 0) when MN-major, got strides " +
                    api::stride_string(b));
  }
  v.inner_contiguous(d, "d");
  // Overlapping rows of d would have two tiles write the same bytes.
  if (s.rows > 1 && d.stride(-2) < s.n) {
    v.fail("d", "must not have overlapping rows (stride(-2) >= N = " + str(s.n) + "), got strides " + api::stride_string(d));
  }
  v.same_device(a, "a", b, "b");
  v.same_device(a, "a", d, "d");
  if (s.groups < 1) v.fail("b", "must hold at least one group, got shape " + api::shape_string(b));
  // As DeepGEMM asserts; neither has a kernel (N = 0 finds no configuration, K = 0 no tensor map).
  if (s.n == 0 || s.k == 0) v.fail("b", "must have N > 0 and K > 0, got shape " + api::shape_string(b));
  const int64_t k_align = 16 / static_cast<int64_t>(a.element_size());
  if (s.k % k_align != 0) {
    v.fail("b", "must have K a multiple of " + str(k_align) + " (TMA rows of 16 bytes), got K = " + str(s.k));
  }
  if (s.n % 8 != 0) v.fail("d", "must have N a multiple of 8 (bfloat16 rows of 16 bytes), got N = " + str(s.n));
  if (s.rows > INT32_MAX || mul(s.groups, s.n) > INT32_MAX || s.k > INT32_MAX) v.fail("a", "has a dimension beyond 2^31 - 1");
  return s;
}

// The FP8 M-grouped ops' recipe (1D2D) and block scales [G, ceil(N/128), ceil(K/128)].
void check_block_scales(const api::Validator& v, const TensorView& a, const TensorView& sfb, const MGroupedShape& s,
                        const GemmOptions& options) {
  api::resolve_recipe(v, options.recipe, device::kRecipe1D2D, {device::kRecipe1D2D}, " by the M-grouped GEMMs");
  v.on_device(sfb, "sfb");
  v.dtype(sfb, "sfb", {DType::kFloat32});
  v.rank(sfb, "sfb", {3});
  v.shape(sfb, "sfb", {s.groups, device::ceil_div<int64_t>(s.n, 128), device::ceil_div<int64_t>(s.k, 128)});
  v.non_negative_strides(sfb, "sfb");
  v.same_device(a, "a", sfb, "sfb");
}

// An int32 tensor of `count` values on a's device.
void check_int_vector(const api::Validator& v, const TensorView& t, const char* arg, int64_t count, const TensorView& a) {
  v.on_device(t, arg);
  v.dtype(t, arg, {DType::kInt32});
  v.rank(t, arg, {1});
  v.shape(t, arg, {count});
  v.contiguous(t, arg);
  v.same_device(a, "a", t, arg);
}

// The K-grouped ops' ks (host) and ks_tensor (device, int32 [G]): one K per group of d, each a multiple of `k_block`
// (>= 0, below 2^31). Returns sum(ks), the non-empty groups and the first of them (-1: none).
struct KGroups {
  int64_t sum_k = 0, non_empty = 0, first = -1;
};
KGroups check_k_groups(const api::Validator& v, std::span<const int64_t> ks, const TensorView& ks_tensor,
                       const TensorView& a, int64_t groups, int64_t k_block) {
  if (static_cast<int64_t>(ks.size()) != groups) {
    v.fail("ks", "must give one K per group: d holds " + str(groups) + " groups, ks has " + str(int64_t(ks.size())));
  }
  KGroups r;
  for (size_t g = 0; g < ks.size(); ++g) {
    if (ks[g] < 0 || ks[g] % k_block != 0) {
      v.fail("ks", "must hold multiples of " + str(k_block) + " (>= 0), got ks[" + str(int64_t(g)) + "] = " + str(ks[g]));
    }
    if (ks[g] > INT32_MAX) {
      v.fail("ks", "must hold values below 2^31 (ks_tensor is int32), got ks[" + str(int64_t(g)) + "] = " + str(ks[g]));
    }
    if (ks[g] > 0 && r.first < 0) r.first = static_cast<int64_t>(g);
    r.non_empty += ks[g] > 0;
    r.sum_k += ks[g];
  }
  check_int_vector(v, ks_tensor, "ks_tensor", groups, a);
  return r;
}

// C of a K-grouped op: FP32 [G, M, N] contiguous on a's device, d itself or not overlapping it. Returns whether it is
// distinct (copied into d first).
bool check_k_grouped_accumulator(const api::Validator& v, const TensorView& c, const TensorView& d, const TensorView& a) {
  v.on_device(c, "c");
  v.same_device(a, "a", c, "c");
  v.dtype(c, "c", {DType::kFloat32});
  v.rank(c, "c", {3});
  v.shape(c, "c", {d.size(0), d.size(1), d.size(2)});
  v.contiguous(c, "c");
  if (c.data == d.data) return false;
  v.no_overlap(d, "d", c, "c");
  return true;
}

// D = C (distinct C) or zeros (no C) before the K-grouped kernel adds every group's product into it.
void prefill_k_grouped(const TensorView& d, const TensorView* c, bool copy_c, cudaStream_t stream) {
  if (c != nullptr && !copy_c) return;
  const int64_t rows = d.size(0) * d.size(1);
  const TensorView d_rows = rows_view(d, rows), c_rows = copy_c ? rows_view(*c, rows) : d_rows;
  api::sm90::prefill_output(d_rows, copy_c ? &c_rows : nullptr, copy_c, stream);
}

// The params every K-grouped launch shares: the schedule over ks_tensor's groups of M x N tiles (d [G, M, N]), k the
// template maps' K, k_blocks_total the k-blocks the buffers hold (the device's ks are clamped to it), FP32 D by
// pointer.
void set_k_grouped_params(device::Sm90GemmParams& p, int raster_band, int64_t k, const TensorView& ks_tensor,
                          const TensorView& d, int64_t k_blocks_total) {
  p.schedule.m = static_cast<int>(d.size(1));
  p.schedule.n = static_cast<int>(d.size(2));
  p.schedule.k = static_cast<int>(k);
  p.schedule.raster_band = raster_band;
  p.d = d.data;
  p.ldd = d.size(2);
  p.schedule.grouped_layout = static_cast<const int32_t*>(ks_tensor.data);
  p.schedule.num_groups = static_cast<int>(d.size(0));
  p.schedule.group_rows = static_cast<int>(d.size(1));
  p.schedule.k_blocks_total = static_cast<int>(k_blocks_total);
}

// B as TMA reads it: K-major, or MN-major as [G, K, N] (N contiguous), whose strides but N's are TMA's.
TensorView b_as_loaded(const TensorView& b, const MGroupedShape& s) { return s.b_k_major ? b : transposed(b); }

// Output and inputs must not overlap; TMA needs 16-byte aligned bases and strides.
void check_memory(const api::Validator& v, const TensorView& d, std::initializer_list<std::pair<const TensorView*, const char*>> ins) {
  v.tma_aligned(d, "d");
  for (auto [t, name] : ins) {
    if (t->dtype == DType::kFloat8E4M3 || t->dtype == DType::kBFloat16) v.tma_aligned(*t, name);  // the operands
    v.no_overlap(d, "d", *t, name);
  }
}

// The params every M-grouped launch shares, any family: A and D as [rows, K] / [rows, N], B as [G N, K] (K-major) or
// as G batches of [N, K] (MN-major: collective/sm90_gemm_traits.cuh, kBGroupsBatched), the schedule over the layout
// tensor.
template <class Choice>
void set_m_grouped_params(device::Sm90GemmParams& p, const Choice& choice, const MGroupedShape& s, const TensorView& a,
                          const TensorView& b, const TensorView& d, const TensorView& layout, const char* op) {
  const auto& cfg = choice.config;
  const api::sm90::GemmTile tile = api::sm90::gemm_tile(cfg, device::smem_bytes(cfg));
  if (s.b_k_major) {
    api::sm90::set_operand_maps(p, tile, rows_view(a, s.rows), s.rows, rows_view(b, s.groups * s.n), s.groups * s.n,
                                s.k, /*a_tail=*/false, op);
  } else {  // one group's stride where there is one group (TMA takes no zero stride)
    const api::sm90::Batches groups{s.groups, s.groups > 1 ? b.stride(0) : mul(s.k, b.stride(2))};
    api::sm90::set_operand_maps(p, tile, rows_view(a, s.rows), s.rows, rows_view(b, s.n), s.n, s.k, /*a_tail=*/false,
                                op, /*a_k_major=*/true, /*b_k_major=*/false, {}, groups);
  }
  p.tma_d = api::sm90::d_map(tile, rows_view(d, s.rows), s.rows, s.n, op);
  p.schedule.m = static_cast<int>(s.rows);
  p.schedule.n = static_cast<int>(s.n);
  p.schedule.k = static_cast<int>(s.k);
  p.schedule.raster_band = choice.launch.raster_band;
  p.d = d.data;
  p.ldd = d.stride(-2);
  p.schedule.grouped_layout = static_cast<const int32_t*>(layout.data);
  p.schedule.num_groups = static_cast<int>(s.groups);
}

// The FP8 M-grouped params: the shared ones, the block scales and the per-row A scales (sfa) as the layout reads them.
Sm90Fp8GemmParams m_grouped_params(const heuristics::Fp8GemmChoice& choice, const MGroupedShape& s,
                                   const TensorView& a, const api::RowScales& sfa, const TensorView& b,
                                   const TensorView& sfb, const TensorView& d, const TensorView& layout,
                                   const char* op) {
  Sm90Fp8GemmParams p{};
  set_m_grouped_params(p, choice, s, a, b, d, layout, op);
  const api::BlockScales blocks{sfb.data, sfb.stride(1), sfb.stride(2), sfb.stride(0)};
  api::set_fp8_scales(p.scales, choice.config, sfa, nullptr, &blocks, op);
  return p;
}

// The rows per group the heuristics plan for: expected_m where given, at most M_sum (no group holds more; a hostile
// expected_m such as 2^63 - 1 would overflow the cost model's tile counts), else M_sum / G.
int64_t expected_rows_per_group(const MGroupedContiguousOptions& options, const MGroupedShape& s) {
  return options.expected_m ? std::min(*options.expected_m, s.rows) : device::ceil_div<int64_t>(s.rows, s.groups);
}

// The contiguous layouts' checks every family shares: D's rows, the layout tensor, expected_m. Returns whether the layout is
// the group ids.
bool check_contiguous_layout(const api::Validator& v, const TensorView& a, const TensorView& d, const MGroupedShape& s,
                             const TensorView& layout, const MGroupedContiguousOptions& options) {
  if (d.size(0) != s.rows) v.fail("d", "must have M = " + str(s.rows) + " rows (a's), got shape " + api::shape_string(d));
  const bool ids = options.layout == ContiguousLayout::kGroupIds;
  check_int_vector(v, layout, "grouped_layout", ids ? s.rows : s.groups, a);
  if (options.expected_m && ids) {
    v.fail("expected_m", "is only taken with the psum and packed layouts (grouped_layout of cumulative row ends)");
  }
  if (options.expected_m && *options.expected_m <= 0) v.fail("expected_m", "must be positive, got " + str(*options.expected_m));
  return ids;
}

// The row every group of a contiguous layout starts at a multiple of (its tiles start there plus whole tiles).
int contiguous_group_align(const MGroupedContiguousOptions& options) {
  return options.layout == ContiguousLayout::kPacked ? 1 : get_mk_alignment_for_contiguous_layout();
}

// The schedule of a contiguous layout (after set_m_grouped_params).
void set_contiguous_schedule(device::Sm90ScheduleParams& schedule, const MGroupedContiguousOptions& options) {
  schedule.ranges_kind = device::kRangesFromEnds;
  schedule.group_align = contiguous_group_align(options);
  // Whole padding tiles of the group-ids layout get zeros (DeepGEMM's behaviour) unless the caller keeps them untouched.
  schedule.zero_padding_blocks = options.layout == ContiguousLayout::kGroupIds && options.zero_padding_blocks ? 1 : 0;
}

// A and D as per-group [G, M_max, ...] stacks: each group's rows densely after the previous group's.
void check_masked_stacks(const api::Validator& v, const TensorView& a, const TensorView& d, const MGroupedShape& s) {
  const int64_t m_max = a.size(1);
  if (a.size(0) != s.groups) v.fail("a", "must hold G = " + str(s.groups) + " groups (b's), got shape " + api::shape_string(a));
  v.shape(d, "d", {s.groups, m_max, s.n});
  if (s.groups > 1 && a.stride(0) != mul(m_max, a.stride(1))) {
    v.fail("a", "must hold its groups densely (stride(0) == M_max * stride(1)), got strides " + api::stride_string(a));
  }
  if (s.groups > 1 && d.stride(0) != mul(m_max, d.stride(1))) {
    v.fail("d", "must hold its groups densely (stride(0) == M_max * stride(1)), got strides " + api::stride_string(d));
  }
}

void run_m_grouped_contiguous(const char* op, const TensorView& a, const TensorView& sfa, const TensorView& b,
                              const TensorView& sfb, const TensorView& d, const TensorView& layout,
                              const MGroupedContiguousOptions& options, cudaStream_t stream) {
  const api::Validator v(op);
  v.rank(a, "a", {2});
  v.rank(d, "d", {2});
  const MGroupedShape s = check_m_grouped(v, a, b, d, DType::kFloat8E4M3);
  check_block_scales(v, a, sfb, s, options);
  const int64_t sf_k = device::ceil_div<int64_t>(s.k, 128);
  const bool sfa_row_major = api::sf_layout(v, sfa, "sfa", s.rows, sf_k, /*allow_mn_major=*/true) == api::SfLayout::kRowMajor;
  v.same_device(a, "a", sfa, "sfa");
  const bool ids = check_contiguous_layout(v, a, d, s, layout, options);
  // TMA takes a box only from an innermost coordinate at a multiple of 16 bytes (else the GPU stops with an illegal
  // instruction): MN-major sfa rows by TMA need tiles that start at rows that are multiples of 4. Where groups (so
  // tiles) may start elsewhere (the packed layout: any row), the staging warps read MN-major sfa by pointer.
  const bool sfa_by_pointer = sfa_row_major || contiguous_group_align(options) % 4 != 0;
  const int alignment = get_mk_alignment_for_contiguous_layout();
  if (s.rows == 0) return;
  check_memory(v, d, {{&a, "a"}, {&b, "b"}, {&sfa, "sfa"}, {&sfb, "sfb"}, {&layout, "grouped_layout"}});

  const heuristics::Fp8GemmProblem problem = heuristics::make_m_grouped_problem(
      ids ? device::kGroupingMIds : device::kGroupingMRanges, expected_rows_per_group(options, s),
      s.n, s.k, s.groups, sfa_by_pointer ? 1 : 0, alignment, get_num_sms(a.device), get_tc_util());
  const heuristics::Fp8GemmChoice choice = api::fp8_grouped_choice(op, problem);
  const api::RowScales sfa_rows{sfa, s.rows, sf_k, sfa_by_pointer, sfa.stride(-2), sf_k == 1 ? 1 : sfa.stride(-1)};
  Sm90Fp8GemmParams p = m_grouped_params(choice, s, a, sfa_rows, b, sfb, d, layout, op);
  set_contiguous_schedule(p.schedule, options);
  api::fp8_gemm_launch(api::fp8_gemm_kernel(choice.config, op, stream), choice, &p, a.device, stream);
}

// The BF16 M-grouped contiguous GEMM: the FP8 one's layouts and schedule with BF16 operands and no scales.
void run_m_grouped_bf16_contiguous(const char* op, const TensorView& a, const TensorView& b, const TensorView& d,
                                   const TensorView& layout, const MGroupedContiguousOptions& options,
                                   cudaStream_t stream) {
  const api::Validator v(op);
  v.rank(a, "a", {2});
  v.rank(d, "d", {2});
  const MGroupedShape s = check_m_grouped(v, a, b, d, DType::kBFloat16, /*b_mn_major=*/true);
  const bool ids = check_contiguous_layout(v, a, d, s, layout, options);
  if (s.rows == 0) return;
  const TensorView b_loaded = b_as_loaded(b, s);
  check_memory(v, d, {{&a, "a"}, {&b_loaded, "b"}, {&layout, "grouped_layout"}});
  const heuristics::Bf16GemmProblem problem = heuristics::make_bf16_m_grouped_problem(
      ids ? device::kGroupingMIds : device::kGroupingMRanges, expected_rows_per_group(options, s), s.n, s.k, s.groups,
      s.b_k_major, get_mk_alignment_for_contiguous_layout(), get_num_sms(a.device), get_tc_util());
  const heuristics::Bf16GemmChoice& choice = api::bf16_grouped_choice(op, problem);
  device::Sm90Bf16GemmParams p{};
  set_m_grouped_params(p, choice, s, a, b, d, layout, op);
  set_contiguous_schedule(p.schedule, options);
  api::bf16_gemm_launch(api::bf16_gemm_kernel(choice.config, op, stream), choice, &p, a.device, stream);
}

}  // namespace

int get_mk_alignment_for_contiguous_layout() { return mk_alignment().load(std::memory_order_relaxed); }

void set_mk_alignment_for_contiguous_layout(int alignment) {
  if (alignment <= 0 || alignment % 64 != 0) {
    throw Error(ErrorKind::kInvalidArgument, "set_mk_alignment_for_contiguous_layout: alignment must be a positive "
                                             "multiple of 64 (the kernels' tile rows divide it), got " + str(alignment));
  }
  mk_alignment().store(alignment, std::memory_order_relaxed);
}

void m_grouped_fp8_gemm_nt_contiguous(const TensorView& a, const TensorView& sfa, const TensorView& b,
                                      const TensorView& sfb, const TensorView& d, const TensorView& grouped_layout,
                                      const MGroupedContiguousOptions& options, cudaStream_t stream) {
  run_m_grouped_contiguous("m_grouped_fp8_gemm_nt_contiguous", a, sfa, b, sfb, d, grouped_layout, options, stream);
}

void m_grouped_fp8_gemm_nn_contiguous(const TensorView& a, const TensorView& sfa, const TensorView& b,
                                      const TensorView& sfb, const TensorView& d, const TensorView& grouped_layout,
                                      const MGroupedContiguousOptions& options, cudaStream_t stream) {
  run_m_grouped_contiguous("m_grouped_fp8_gemm_nn_contiguous", a, sfa, transposed(b), transposed(sfb), d,
                           grouped_layout, options, stream);
}

void m_grouped_fp8_gemm_nt_masked(const TensorView& a, const TensorView& sfa, const TensorView& b,
                                  const TensorView& sfb, const TensorView& d, const TensorView& masked_m,
                                  int64_t expected_m, const GemmOptions& options, cudaStream_t stream) {
  const char* op = "m_grouped_fp8_gemm_nt_masked";
  const api::Validator v(op);
  v.rank(a, "a", {3});
  v.rank(d, "d", {3});
  const MGroupedShape s = check_m_grouped(v, a, b, d, DType::kFloat8E4M3);
  check_block_scales(v, a, sfb, s, options);
  const int64_t m_max = a.size(1), sf_k = device::ceil_div<int64_t>(s.k, 128);
  check_masked_stacks(v, a, d, s);
  // sfa [G, M_max, ceil(K/128)]: row-major rows of all groups, or per group MN-major TMA-aligned (one map of
  // [G x ceil(K/128)] columns of M_max rows).
  v.on_device(sfa, "sfa");
  v.dtype(sfa, "sfa", {DType::kFloat32});
  v.rank(sfa, "sfa", {3});
  v.shape(sfa, "sfa", {s.groups, m_max, sf_k});
  v.same_device(a, "a", sfa, "sfa");
  const bool sfa_row_major = (sfa.stride(2) == 1 || sf_k == 1) && sfa.stride(1) >= sf_k &&
                             (s.groups == 1 || sfa.stride(0) == mul(m_max, sfa.stride(1)));
  const bool sfa_mn_major = !sfa_row_major && api::mn_major_tma_aligned(sfa, m_max) &&
                            (s.groups == 1 || sfa.stride(0) == mul(sf_k, sfa.stride(2)));
  if (!sfa_row_major && !sfa_mn_major) {
    v.fail("sfa", "must be row-major [G, M_max, ceil(K/128)] or per group MN-major TMA-aligned (strides (sf_k * "
                  "align(M_max, 4), 1, align(M_max, 4))), got strides " + api::stride_string(sfa));
  }
  check_int_vector(v, masked_m, "masked_m", s.groups, a);
  if (expected_m <= 0) v.fail("expected_m", "must be positive, got " + str(expected_m));
  if (m_max == 0) return;
  check_memory(v, d, {{&a, "a"}, {&b, "b"}, {&sfa, "sfa"}, {&sfb, "sfb"}, {&masked_m, "masked_m"}});

  const heuristics::Fp8GemmProblem problem =
      heuristics::make_m_grouped_problem(device::kGroupingMRanges, std::min(expected_m, m_max), s.n, s.k, s.groups,
                                         sfa_row_major ? 1 : 0, 0, get_num_sms(a.device), get_tc_util());
  const heuristics::Fp8GemmChoice choice = api::fp8_grouped_choice(op, problem);
  // Row-major: the rows of all groups; MN-major: one [M_max, G x sf_k] map, column stride align(M_max, 4), whose
  // group columns the kernel offsets (sfa_group_k_blocks).
  TensorView columns = sfa;
  columns.rank = 2;
  columns.shape[0] = m_max;
  columns.shape[1] = s.groups * sf_k;
  columns.strides[0] = 1;
  columns.strides[1] = sfa.stride(2);
  const api::RowScales sfa_rows = sfa_row_major ? api::RowScales{rows_view(sfa, s.rows), s.rows, sf_k, true, sfa.stride(1)}
                                                : api::RowScales{columns, m_max, s.groups * sf_k, false, 0};
  Sm90Fp8GemmParams p = m_grouped_params(choice, s, a, sfa_rows, b, sfb, d, masked_m, op);
  if (!sfa_row_major) p.scales.sfa_group_k_blocks = static_cast<int>(sf_k);
  p.schedule.ranges_kind = device::kRangesMasked;
  p.schedule.group_rows = static_cast<int>(m_max);
  api::fp8_gemm_launch(api::fp8_gemm_kernel(choice.config, op, stream), choice, &p, a.device, stream);
}

void m_grouped_bf16_gemm_nt_contiguous(const TensorView& a, const TensorView& b, const TensorView& d,
                                       const TensorView& grouped_layout, const MGroupedContiguousOptions& options,
                                       cudaStream_t stream) {
  run_m_grouped_bf16_contiguous("m_grouped_bf16_gemm_nt_contiguous", a, b, d, grouped_layout, options, stream);
}

void m_grouped_bf16_gemm_nn_contiguous(const TensorView& a, const TensorView& b, const TensorView& d,
                                       const TensorView& grouped_layout, const MGroupedContiguousOptions& options,
                                       cudaStream_t stream) {
  run_m_grouped_bf16_contiguous("m_grouped_bf16_gemm_nn_contiguous", a, transposed(b), d, grouped_layout, options,
                                stream);
}

void m_grouped_bf16_gemm_nt_masked(const TensorView& a, const TensorView& b, const TensorView& d,
                                   const TensorView& masked_m, int64_t expected_m, const GemmOptions&,
                                   cudaStream_t stream) {
  const char* op = "m_grouped_bf16_gemm_nt_masked";
  const api::Validator v(op);
  v.rank(a, "a", {3});
  v.rank(d, "d", {3});
  const MGroupedShape s = check_m_grouped(v, a, b, d, DType::kBFloat16);
  check_masked_stacks(v, a, d, s);
  const int64_t m_max = a.size(1);
  check_int_vector(v, masked_m, "masked_m", s.groups, a);
  if (expected_m <= 0) v.fail("expected_m", "must be positive, got " + str(expected_m));
  if (m_max == 0) return;
  check_memory(v, d, {{&a, "a"}, {&b, "b"}, {&masked_m, "masked_m"}});
  const heuristics::Bf16GemmProblem problem =
      heuristics::make_bf16_m_grouped_problem(device::kGroupingMRanges, std::min(expected_m, m_max), s.n, s.k, s.groups,
                                              /*b_k_major=*/true, 0, get_num_sms(a.device), get_tc_util());
  const heuristics::Bf16GemmChoice& choice = api::bf16_grouped_choice(op, problem);
  device::Sm90Bf16GemmParams p{};
  set_m_grouped_params(p, choice, s, a, b, d, masked_m, op);
  p.schedule.ranges_kind = device::kRangesMasked;
  p.schedule.group_rows = static_cast<int>(m_max);
  api::bf16_gemm_launch(api::bf16_gemm_kernel(choice.config, op, stream), choice, &p, a.device, stream);
}

void k_grouped_fp8_gemm_nt_contiguous(const TensorView& a, const TensorView& sfa, const TensorView& b,
                                      const TensorView& sfb, const TensorView& d, std::span<const int64_t> ks,
                                      const TensorView& ks_tensor, const TensorView* c, const GemmOptions& options,
                                      cudaStream_t stream) {
  const char* op = "k_grouped_fp8_gemm_nt_contiguous";
  const api::Validator v(op);
  for (auto [t, name] : {std::pair{&a, "a"}, {&b, "b"}, {&d, "d"}}) v.on_device(*t, name);
  v.dtype(a, "a", {DType::kFloat8E4M3});
  v.dtype(b, "b", {DType::kFloat8E4M3});
  v.dtype(d, "d", {DType::kFloat32});
  v.rank(d, "d", {3});
  v.contiguous(d, "d");
  v.contiguous(a, "a");
  v.contiguous(b, "b");
  v.same_device(a, "a", b, "b");
  v.same_device(a, "a", d, "d");
  api::resolve_recipe(v, options.recipe, device::kRecipe1D1D, {device::kRecipe1D1D}, " by the K-grouped GEMM");
  const int64_t groups = d.size(0), m = d.size(1), n = d.size(2);
  const auto [sum_k, non_empty, first] = check_k_groups(v, ks, ks_tensor, a, groups, 128);
  if (a.numel() != mul(sum_k, m)) {
    v.fail("a", "must hold sum(ks) x M = " + str(sum_k) + " x " + str(m) + " elements, got " + str(a.numel()));
  }
  if (b.numel() != mul(sum_k, n)) {
    v.fail("b", "must hold sum(ks) x N = " + str(sum_k) + " x " + str(n) + " elements, got " + str(b.numel()));
  }
  if (n % 4 != 0) v.fail("d", "must have N a multiple of 4 (float32 rows of 16 bytes), got N = " + str(n));
  if (mul(groups, m) > INT32_MAX || n > INT32_MAX || sum_k / 128 > INT32_MAX) v.fail("d", "has a dimension beyond 2^31 - 1");
  // Scales [M, sum(ks) / 128] and [N, sum(ks) / 128], MN-major TMA-aligned: each group's columns are a box away.
  const int64_t sf_k = sum_k / 128;
  for (auto [sf, name, rows] : {std::tuple{&sfa, "sfa", m}, {&sfb, "sfb", n}}) {
    v.on_device(*sf, name);
    v.dtype(*sf, name, {DType::kFloat32});
    v.rank(*sf, name, {2});
    v.shape(*sf, name, {rows, sf_k});
    v.same_device(a, "a", *sf, name);
    if (!api::mn_major_tma_aligned(*sf, rows) && sf_k > 0) {
      v.fail(name, "must be MN-major TMA-aligned (strides (1, align(rows, 4)), as get_mn_major_tma_aligned_tensor "
                   "returns it), got strides " + api::stride_string(*sf));
    }
  }
  const bool copy_c = c != nullptr && check_k_grouped_accumulator(v, *c, d, a);
  if (groups == 0 || m == 0 || n == 0) return;
  if (sum_k > 0) check_memory(v, d, {{&a, "a"}, {&b, "b"}, {&sfa, "sfa"}, {&sfb, "sfb"}, {&ks_tensor, "ks_tensor"}});

  heuristics::Fp8GemmProblem problem;
  std::optional<heuristics::Fp8GemmChoice> choice;
  if (non_empty > 0) {
    // The model sees the mean K of the groups that have one.
    problem = heuristics::make_k_grouped_problem(m, n, sum_k / non_empty, non_empty, get_num_sms(a.device), get_tc_util());
    choice = api::fp8_grouped_choice(op, problem);
  }
  // Everything that may refuse (the kernel load, the workspace) before C reaches D.
  const jit::LoadedKernel* kernel = choice ? &api::fp8_gemm_kernel(choice->config, op, stream) : nullptr;
  const size_t slot_bytes =
      choice ? size_t(choice->launch.num_sms) * device::k_group_map_slots(choice->config.num_stages) * 2 * 128 : 0;
  const runtime::Workspace workspace(0, slot_bytes, stream, op);
  prefill_k_grouped(d, c, copy_c, stream);
  if (!choice) return;

  const Sm90Fp8GemmConfig& cfg = choice->config;
  const api::sm90::GemmTile tile = api::sm90::gemm_tile(cfg, device::smem_bytes(cfg));
  Sm90Fp8GemmParams p{};
  // The template maps: the first non-empty group's A and B; the producer patches base, K and row stride per group.
  int64_t offset = 0;
  for (int64_t g = 0; g < first; ++g) offset += ks[g];
  const int64_t k0 = ks[first];
  const TensorView a0 = make_tensor(static_cast<uint8_t*>(a.data) + offset * m, DType::kFloat8E4M3, {m, k0}, {k0, 1}, a.device);
  const TensorView b0 = make_tensor(static_cast<uint8_t*>(b.data) + offset * n, DType::kFloat8E4M3, {n, k0}, {k0, 1}, b.device);
  api::sm90::set_operand_maps(p, tile, a0, m, b0, n, k0, /*a_tail=*/false, op);
  const api::RowScales sfb_rows{sfb, n, sf_k, false, 0};
  api::set_fp8_scales(p.scales, cfg, {sfa, m, sf_k, false, 0}, &sfb_rows, nullptr, op);
  set_k_grouped_params(p, choice->launch.raster_band, k0, ks_tensor, d, sf_k);
  p.a_base = static_cast<const uint8_t*>(a.data);
  p.b_base = static_cast<const uint8_t*>(b.data);
  p.tensor_map_slots = static_cast<device::TmaDescriptor*>(workspace.partials());
  api::fp8_gemm_launch(*kernel, *choice, &p, a.device, stream);
}

void k_grouped_bf16_gemm_tn_contiguous(const TensorView& a, const TensorView& b, const TensorView& d,
                                       std::span<const int64_t> ks, const TensorView& ks_tensor, const TensorView* c,
                                       const GemmOptions&, cudaStream_t stream) {
  const char* op = "k_grouped_bf16_gemm_tn_contiguous";
  const api::Validator v(op);
  for (auto [t, name] : {std::pair{&a, "a"}, {&b, "b"}, {&d, "d"}}) v.on_device(*t, name);
  v.dtype(a, "a", {DType::kBFloat16});
  v.dtype(b, "b", {DType::kBFloat16});
  v.dtype(d, "d", {DType::kFloat32});
  v.rank(a, "a", {2});
  v.rank(b, "b", {2});
  v.rank(d, "d", {3});
  v.contiguous(d, "d");
  v.inner_contiguous(a, "a");
  v.inner_contiguous(b, "b");
  v.same_device(a, "a", b, "b");
  v.same_device(a, "a", d, "d");
  const int64_t groups = d.size(0), m = d.size(1), n = d.size(2);
  // Each group a whole number of 64-K k-blocks: a k-block never reads into the next group's rows.
  const auto [sum_k, non_empty, first] = check_k_groups(v, ks, ks_tensor, a, groups, device::kBf16BlockK);
  v.shape(a, "a", {sum_k, m});
  v.shape(b, "b", {sum_k, n});
  if (n % 4 != 0) v.fail("d", "must have N a multiple of 4 (float32 rows of 16 bytes), got N = " + str(n));
  if (mul(groups, m) > INT32_MAX || n > INT32_MAX || sum_k > INT32_MAX) v.fail("d", "has a dimension beyond 2^31 - 1");
  const bool copy_c = c != nullptr && check_k_grouped_accumulator(v, *c, d, a);
  if (groups == 0 || m == 0 || n == 0) return;
  if (sum_k > 0) check_memory(v, d, {{&a, "a"}, {&b, "b"}, {&ks_tensor, "ks_tensor"}});

  std::optional<heuristics::Bf16GemmChoice> choice;
  if (non_empty > 0) {
    // The model sees the mean K of the groups that have one.
    choice = api::bf16_grouped_choice(op, heuristics::make_bf16_k_grouped_problem(
                                              m, n, sum_k / non_empty, non_empty, get_num_sms(a.device), get_tc_util()));
  }
  // The kernel load (which may refuse inside a capture) before C reaches D.
  const jit::LoadedKernel* kernel = choice ? &api::bf16_gemm_kernel(choice->config, op, stream) : nullptr;
  prefill_k_grouped(d, c, copy_c, stream);
  if (!choice) return;

  const auto& cfg = choice->config;
  const api::sm90::GemmTile tile = api::sm90::gemm_tile(cfg, device::smem_bytes(cfg));
  device::Sm90Bf16GemmParams p{};
  // A and B as MN-major [M, sum(ks)] / [N, sum(ks)]: the groups are K ranges of one map each.
  api::sm90::set_operand_maps(p, tile, transposed(a), m, transposed(b), n, sum_k, /*a_tail=*/false, op,
                              /*a_k_major=*/false, /*b_k_major=*/false);
  set_k_grouped_params(p, choice->launch.raster_band, sum_k, ks_tensor, d, sum_k / device::kBf16BlockK);
  api::bf16_gemm_launch(*kernel, *choice, &p, a.device, stream);
}

void k_grouped_fp8_gemm_tn_contiguous(const TensorView&, const TensorView&, const TensorView&, const TensorView&,
                                      const TensorView&, std::span<const int64_t>, const TensorView&,
                                      const TensorView*, const GemmOptions&, cudaStream_t) {
  throw Error(ErrorKind::kUnsupported,
              "k_grouped_fp8_gemm_tn_contiguous: not supported on SM90: its A [sum(ks), M] and B [sum(ks), N] are "
              "MN-major, and SM90's FP8 WGMMA reads K-major operands only; lay each group out K-major and call "
              "k_grouped_fp8_gemm_nt_contiguous");
}

}  // namespace hopgemm
