// A seeded fuzzer of the validation layer (issue 29, item 4): random calls to every public op (the dense FP8 GEMMs in
// their four forms and with config overrides, the M-grouped GEMMs in each layout and form, masked, K-grouped nt and
// tn, the scale-factor layout ops and the transform planner, the FP8 quantisers) with random shapes, strides, dtypes
// (out-of-enum values included), ranks, data pointers (null, unaligned, aliasing another operand, near the top of
// the address space), devices, recipes, options, grouped layouts and ks lists. Each case starts from a valid call of
// random dimensions and applies zero to five mutations, or (one case in eight) is random throughout.
//
// Every case must end in hopgemm::Error or return; any other exception, a signal or a case that takes seconds fails
// the run and prints the case. Nothing can reach a kernel: the JIT policy is error_on_miss over an empty private
// cache, CUDA_VISIBLE_DEVICES="" hides any GPU (set before the first CUDA call: ctest runs each test in a process of
// its own), and with no GPU the first device query throws (half the cases leave the SM count to the device).
//
//   HOPGEMM_FUZZ_CASES=N  cases to run (default 100000, about 3 s); HOPGEMM_FUZZ_SEED=S the seed (default 29)
//   HOPGEMM_FUZZ_CASE=I   run case I of the seed alone, printing it (reproduces a reported failure)
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hopgemm/error.hpp"
#include "hopgemm/gemm.hpp"
#include "hopgemm/grouped_gemm.hpp"
#include "hopgemm/jit.hpp"
#include "hopgemm/layout.hpp"
#include "hopgemm/quantize.hpp"
#include "hopgemm/runtime.hpp"
#include "hopgemm/tuning.hpp"

namespace hopgemm {
namespace {

// ---- randomness: one splitmix64 stream per case, so that any case reruns alone ----------------------------------

class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  int64_t uniform(int64_t lo, int64_t hi) {  // [lo, hi]
    return lo + static_cast<int64_t>(next() % static_cast<uint64_t>(hi - lo + 1));
  }
  bool chance(int one_in) { return next() % static_cast<uint64_t>(one_in) == 0; }
  template <class T, size_t N>
  T pick(const T (&values)[N]) {
    return values[next() % N];
  }

 private:
  uint64_t state_;
};

uint64_t env_u64(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::strtoull(v, nullptr, 10) : fallback;
}

constexpr int64_t kI64Max = INT64_MAX, kI64Min = INT64_MIN;

// Extents and strides a caller can give: mostly plausible, sometimes hostile.
int64_t hostile_value(Rng& r) {
  static const int64_t values[] = {-1,        -2,         -128,        0,          1,          2,         3,
                                   15,        16,         17,          127,        129,        255,       4097,
                                   1 << 20,   INT32_MAX,  int64_t{1} << 31,        int64_t{1} << 32,
                                   int64_t{1} << 40,      int64_t{1} << 62,        kI64Max,    kI64Min,
                                   kI64Max / 2 + 1,       -(int64_t{1} << 40)};
  return r.pick(values);
}

int64_t dim(Rng& r, int64_t multiple = 1, int64_t max = 4096) {
  if (r.chance(10)) return 0;
  return r.uniform(1, max / multiple) * multiple;
}

// Two's-complement arithmetic without UB, for mutating hostile values.
int64_t wrap_add(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b)); }
int64_t wrap_mul(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b)); }

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t align4(int64_t x) { return (x + 3) / 4 * 4; }

// Fake device addresses, each operand 2^36 bytes from the next: never dereferenced.
void* fake_address(int region) { return reinterpret_cast<void*>((uintptr_t{1} << 40) + (uintptr_t(region) << 36)); }

TensorView tensor(int region, DType dtype, std::initializer_list<int64_t> shape) {
  return make_tensor(fake_address(region), dtype, shape);
}
TensorView tensor(int region, DType dtype, std::initializer_list<int64_t> shape,
                  std::initializer_list<int64_t> strides) {
  return make_tensor(fake_address(region), dtype, shape, strides);
}

// ---- one call: named tensor operands and the op's other arguments ------------------------------------------------

struct Operand {
  const char* name;
  TensorView view;
  bool present = true;  // optional operands (c) may be absent
};

struct Call {
  std::vector<Operand> operands;
  GemmOptions options;
  MGroupedContiguousOptions grouped;
  int64_t expected_m = 0;
  std::vector<int64_t> ks;      // K-grouped GEMM
  std::vector<int> layout_ks;   // K-grouped packed UE8M0
  int gran_k = 128;
  bool use_ue8m0 = false;
  int64_t plan_mn = 0, plan_k = 0;
  int plan_gran_mn = 1, plan_gran_k = 128, plan_groups = -1;
  std::map<std::string, int> overrides;
  Fp8GemmProblemSpec spec;  // fp8_gemm_config

  TensorView& at(const char* name) {
    for (auto& o : operands)
      if (std::string(o.name) == name) return o.view;
    throw std::logic_error(std::string("no operand ") + name);
  }
  const TensorView* optional(const char* name) const {
    for (const auto& o : operands)
      if (std::string(o.name) == name) return o.present ? &o.view : nullptr;
    return nullptr;
  }
  const TensorView& get(const char* name) const { return *optional(name); }
};

// ---- the ops: a valid call of random dimensions, and how to run one ----------------------------------------------

struct Op {
  const char* name;
  std::function<Call(Rng&)> valid;
  std::function<void(const Call&)> run;
};

DType pick_dtype(Rng& r) {
  if (r.chance(20)) return static_cast<DType>(r.uniform(7, 255));  // not an enumerator
  static const DType all[] = {DType::kFloat8E4M3, DType::kBFloat16, DType::kFloat16, DType::kFloat32,
                              DType::kInt32,      DType::kInt64,    DType::kUInt8};
  return r.pick(all);
}

std::array<int, 3> pick_recipe(Rng& r) {
  static const std::array<int, 3> recipes[] = {{0, 0, 0}, {1, 128, 128}, {1, 1, 128}, {128, 128, 128},
                                               {1, 128, 0}, {2, 2, 2},   {-1, 1, 128}, {1, 1, 256}};
  return r.pick(recipes);
}

// Dense: nt form views; the other forms get A and/or B transposed.
Call valid_dense(Rng& r) {
  const int64_t m = dim(r), k = dim(r, 16), n = dim(r, 8);
  const bool one_d_one_d = r.chance(2);
  const bool fp32_out = one_d_one_d || r.chance(4);
  const int64_t sf_k = ceil_div(k, 128);
  Call c;
  c.operands = {{"a", tensor(0, DType::kFloat8E4M3, {m, k})},
                {"sfa", r.chance(2) ? tensor(1, DType::kFloat32, {m, sf_k})
                                    : tensor(1, DType::kFloat32, {m, sf_k}, {1, align4(m)})},
                {"b", tensor(2, DType::kFloat8E4M3, {n, k})},
                {"sfb", one_d_one_d ? tensor(3, DType::kFloat32, {n, sf_k}) : tensor(3, DType::kFloat32, {ceil_div(n, 128), sf_k})},
                {"d", tensor(4, fp32_out ? DType::kFloat32 : DType::kBFloat16, {m, n})},
                {"c", tensor(5, fp32_out ? DType::kFloat32 : DType::kBFloat16, {m, n}), r.chance(2)}};
  if (r.chance(3)) c.operands[5].view = c.operands[4].view;  // C aliased with D: accumulate in place
  if (!r.chance(3)) c.options.recipe = one_d_one_d ? std::array<int, 3>{1, 1, 128} : std::array<int, 3>{1, 128, 128};
  return c;
}

using DenseFn = void (*)(const TensorView&, const TensorView&, const TensorView&, const TensorView&,
                         const TensorView&, const TensorView*, const GemmOptions&, cudaStream_t);

std::function<void(const Call&)> run_dense(DenseFn fn, bool a_t, bool b_t) {
  return [=](const Call& c) {
    fn(a_t ? transposed(c.get("a")) : c.get("a"), a_t ? transposed(c.get("sfa")) : c.get("sfa"),
       b_t ? transposed(c.get("b")) : c.get("b"), b_t ? transposed(c.get("sfb")) : c.get("sfb"), c.get("d"),
       c.optional("c"), c.options, nullptr);
  };
}

Call valid_m_grouped(Rng& r) {
  const int64_t g = r.uniform(1, 16), k = dim(r, 128, 2048), n = dim(r, 128, 2048), sf_k = ceil_div(k, 128);
  const int layout = static_cast<int>(r.uniform(0, 2));
  const int64_t m_sum = layout == 0 ? dim(r, 128, 4096) : dim(r, 1, 4096);
  Call c;
  c.operands = {{"a", tensor(0, DType::kFloat8E4M3, {m_sum, k})},
                {"sfa", r.chance(2) ? tensor(1, DType::kFloat32, {m_sum, sf_k})
                                    : tensor(1, DType::kFloat32, {m_sum, sf_k}, {1, align4(m_sum)})},
                {"b", tensor(2, DType::kFloat8E4M3, {g, n, k})},
                {"sfb", tensor(3, DType::kFloat32, {g, ceil_div(n, 128), sf_k})},
                {"d", tensor(4, DType::kBFloat16, {m_sum, n})},
                {"grouped_layout", tensor(5, DType::kInt32, {layout == 0 ? m_sum : g})}};
  c.grouped.layout = static_cast<ContiguousLayout>(layout);
  if (layout != 0 && r.chance(2)) c.grouped.expected_m = r.chance(4) ? hostile_value(r) : dim(r);
  if (r.chance(2)) c.grouped.recipe = {1, 128, 128};
  return c;
}

// nn takes B and sfb as [G, K, N] views of the K-major buffers.
TensorView transposed_if(const TensorView& t, bool yes) { return yes ? transposed(t) : t; }

std::function<void(const Call&)> run_m_grouped(bool nn) {
  return [=](const Call& c) {
    auto fn = nn ? &m_grouped_fp8_gemm_nn_contiguous : &m_grouped_fp8_gemm_nt_contiguous;
    fn(c.get("a"), c.get("sfa"), transposed_if(c.get("b"), nn), transposed_if(c.get("sfb"), nn), c.get("d"),
       c.get("grouped_layout"), c.grouped, nullptr);
  };
}

Call valid_masked(Rng& r) {
  const int64_t g = r.uniform(1, 16), m_max = dim(r, 1, 1024), k = dim(r, 128, 2048), n = dim(r, 128, 2048);
  const int64_t sf_k = ceil_div(k, 128);
  Call c;
  c.operands = {{"a", tensor(0, DType::kFloat8E4M3, {g, m_max, k})},
                {"sfa", r.chance(2) ? tensor(1, DType::kFloat32, {g, m_max, sf_k})
                                    : tensor(1, DType::kFloat32, {g, m_max, sf_k},
                                             {sf_k * align4(m_max), 1, align4(m_max)})},
                {"b", tensor(2, DType::kFloat8E4M3, {g, n, k})},
                {"sfb", tensor(3, DType::kFloat32, {g, ceil_div(n, 128), sf_k})},
                {"d", tensor(4, DType::kBFloat16, {g, m_max, n})},
                {"masked_m", tensor(5, DType::kInt32, {g})}};
  c.expected_m = r.chance(4) ? hostile_value(r) : dim(r);
  return c;
}

void run_masked(const Call& c) {
  m_grouped_fp8_gemm_nt_masked(c.get("a"), c.get("sfa"), c.get("b"), c.get("sfb"), c.get("d"), c.get("masked_m"),
                               c.expected_m, c.options, nullptr);
}

Call valid_k_grouped(Rng& r) {
  const int64_t g = r.uniform(1, 12), m = dim(r, 1, 1024), n = dim(r, 4, 1024);
  Call c;
  int64_t sum_k = 0;
  for (int64_t i = 0; i < g; ++i) {
    c.ks.push_back(r.chance(5) ? 0 : r.uniform(1, 8) * 128);
    sum_k += c.ks.back();
  }
  const int64_t sf_k = sum_k / 128;
  c.operands = {{"a", tensor(0, DType::kFloat8E4M3, {sum_k * m})},
                {"sfa", tensor(1, DType::kFloat32, {m, sf_k}, {1, align4(m)})},
                {"b", tensor(2, DType::kFloat8E4M3, {sum_k * n})},
                {"sfb", tensor(3, DType::kFloat32, {n, sf_k}, {1, align4(n)})},
                {"d", tensor(4, DType::kFloat32, {g, m, n})},
                {"ks_tensor", tensor(5, DType::kInt32, {g})},
                {"c", tensor(6, DType::kFloat32, {g, m, n}), r.chance(2)}};
  if (r.chance(3)) c.operands[6].view = c.operands[4].view;
  if (r.chance(2)) c.options.recipe = {1, 1, 128};
  return c;
}

std::function<void(const Call&)> run_k_grouped(bool tn) {
  return [=](const Call& c) {
    auto fn = tn ? &k_grouped_fp8_gemm_tn_contiguous : &k_grouped_fp8_gemm_nt_contiguous;
    fn(c.get("a"), c.get("sfa"), c.get("b"), c.get("sfb"), c.get("d"), c.ks, c.get("ks_tensor"), c.optional("c"),
       c.options, nullptr);
  };
}

// Scale-factor layout ops: sf [mn, sf_k] or [G, mn, sf_k] in any strides, out MN-major TMA-aligned.
Call valid_sf_layout(Rng& r, bool packed) {
  const bool grouped = r.chance(2);
  const int64_t g = r.uniform(1, 8), mn = dim(r, 1, 2048), sf_k = dim(r, 1, 64);
  const int64_t out_k = packed ? ceil_div(sf_k, 4) : sf_k, ld = align4(mn);
  Call c;
  const TensorView sf = grouped ? (r.chance(2) ? tensor(0, DType::kFloat32, {g, mn, sf_k})
                                               : tensor(0, DType::kFloat32, {g, mn, sf_k}, {1, g * sf_k, g}))
                                : (r.chance(2) ? tensor(0, DType::kFloat32, {mn, sf_k})
                                               : tensor(0, DType::kFloat32, {mn, sf_k}, {1, mn}));
  const DType out_dtype = packed ? DType::kInt32 : DType::kFloat32;
  const TensorView out = grouped ? tensor(1, out_dtype, {g, mn, out_k}, {ld * out_k, 1, ld})
                                 : tensor(1, out_dtype, {mn, out_k}, {1, ld});
  c.operands = {{"sf", sf}, {"out", out}};
  return c;
}

Call valid_k_grouped_packed(Rng& r) {
  const int64_t g = r.uniform(1, 200), mn = dim(r, 1, 2048);
  Call c;
  int64_t sf_rows = 0, out_rows = 0;
  for (int64_t i = 0; i < g; ++i) {
    const int k = r.chance(6) ? 0 : static_cast<int>(r.uniform(1, 4096));
    c.layout_ks.push_back(k);
    sf_rows += ceil_div(k, 128);
    out_rows += ceil_div(k, 512);
  }
  c.operands = {{"sf", r.chance(2) ? tensor(0, DType::kFloat32, {sf_rows, mn})
                                   : tensor(0, DType::kFloat32, {sf_rows, mn}, {1, sf_rows})},
                {"out", tensor(1, DType::kInt32, {out_rows, mn})}};
  return c;
}

Call valid_plan(Rng& r) {
  Call c = valid_sf_layout(r, false);
  c.operands.pop_back();
  const TensorView& sf = c.at("sf");
  c.plan_gran_mn = r.chance(2) ? 1 : 128;
  c.plan_gran_k = 128;
  c.plan_mn = sf.size(-2) * c.plan_gran_mn;
  c.plan_k = sf.size(-1) * 128;
  c.plan_groups = sf.rank == 3 ? static_cast<int>(sf.size(0)) : -1;
  return c;
}

// Quantisers: kind 0 per token, 1 per block, 2 per channel.
Call valid_quantize(Rng& r, int kind) {
  static const int grans[] = {128, 128, 64, 32, 256};
  const int gran = r.pick(grans);
  const int64_t m = kind == 2 ? dim(r, gran, 4096) : dim(r), n = dim(r, 16, 4096);
  Call c;
  c.gran_k = gran;
  c.use_ue8m0 = r.chance(2);
  const int64_t sf_m = kind == 0 ? m : kind == 1 ? ceil_div(m, 128) : m / gran;
  const int64_t sf_n = kind == 0 ? ceil_div(n, gran) : kind == 1 ? ceil_div(n, 128) : n;
  if (kind == 1) c.gran_k = 128;
  c.operands = {{"x", tensor(0, r.chance(2) ? DType::kBFloat16 : DType::kFloat32, {m, n})},
                {"x_fp8", tensor(1, DType::kFloat8E4M3, {m, n})},
                {"sf", tensor(2, DType::kFloat32, {sf_m, sf_n})}};
  return c;
}

using QuantizeFn = void (*)(const TensorView&, const TensorView&, const TensorView&, bool, int, cudaStream_t);

std::function<void(const Call&)> run_quantize(QuantizeFn fn) {
  return [=](const Call& c) { fn(c.get("x"), c.get("x_fp8"), c.get("sf"), c.use_ue8m0, c.gran_k, nullptr); };
}

const std::vector<Op>& ops() {
  static const std::vector<Op> all = {
      {"fp8_gemm_nt", valid_dense, run_dense(&fp8_gemm_nt, false, false)},
      {"fp8_gemm_nn", valid_dense, run_dense(&fp8_gemm_nn, false, true)},
      {"fp8_gemm_tn", valid_dense, run_dense(&fp8_gemm_tn, true, true)},
      {"fp8_gemm_tt", valid_dense, run_dense(&fp8_gemm_tt, true, false)},
      {"fp8_gemm_nt_with_overrides",
       [](Rng& r) {
         Call c = valid_dense(r);
         static const char* names[] = {"block_m", "block_n", "num_stages", "cluster_m", "cluster_n", "split_k",
                                       "num_math_warpgroups", "no_such_field", ""};
         for (int i = static_cast<int>(r.uniform(0, 3)); i > 0; --i) {
           c.overrides[r.pick(names)] = r.chance(2) ? static_cast<int>(r.uniform(-2, 300))
                                                     : static_cast<int>(hostile_value(r));
         }
         return c;
       },
       [](const Call& c) {
         fp8_gemm_nt_with_overrides(c.get("a"), c.get("sfa"), c.get("b"), c.get("sfb"), c.get("d"), c.optional("c"),
                                    c.options, c.overrides, nullptr);
       }},
      {"m_grouped_fp8_gemm_nt_contiguous", valid_m_grouped, run_m_grouped(false)},
      {"m_grouped_fp8_gemm_nn_contiguous", valid_m_grouped, run_m_grouped(true)},
      {"m_grouped_fp8_gemm_nt_masked", valid_masked, run_masked},
      {"k_grouped_fp8_gemm_nt_contiguous", valid_k_grouped, run_k_grouped(false)},
      {"k_grouped_fp8_gemm_tn_contiguous", valid_k_grouped, run_k_grouped(true)},
      {"get_mn_major_tma_aligned_tensor", [](Rng& r) { return valid_sf_layout(r, false); },
       [](const Call& c) { get_mn_major_tma_aligned_tensor(c.get("sf"), c.get("out"), nullptr); }},
      {"get_mn_major_tma_aligned_packed_ue8m0_tensor", [](Rng& r) { return valid_sf_layout(r, true); },
       [](const Call& c) { get_mn_major_tma_aligned_packed_ue8m0_tensor(c.get("sf"), c.get("out"), nullptr); }},
      {"get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor", valid_k_grouped_packed,
       [](const Call& c) {
         get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor(c.get("sf"), c.layout_ks, c.get("out"), nullptr);
       }},
      {"transform_sf_into_required_layout", valid_plan,
       [](const Call& c) {
         plan_transform_sf_into_required_layout(c.get("sf"), c.plan_mn, c.plan_k, c.plan_gran_mn, c.plan_gran_k,
                                                c.plan_groups);
       }},
      {"fp8_gemm_config",  // the tuning hook: a problem spec, no tensors
       [](Rng& r) {
         Call c;
         Fp8GemmProblemSpec& s = c.spec;
         s.op = static_cast<Fp8GemmOpKind>(r.chance(16) ? r.uniform(4, 9) : r.uniform(0, 3));
         s.m = r.chance(4) ? hostile_value(r) : dim(r, 1, 16384);
         s.n = r.chance(4) ? hostile_value(r) : dim(r, 8, 16384);
         s.k = r.chance(4) ? hostile_value(r) : dim(r, 128, 16384);
         s.num_groups = r.chance(4) ? hostile_value(r) : r.uniform(1, 64);
         s.recipe_1d1d = r.chance(2), s.fp32_out = r.chance(2), s.accumulate = r.chance(2);
         s.sfa_row_major = r.chance(2), s.sfb_row_major = r.chance(2), s.scale_rows_aligned = r.chance(2);
         static const int aligns[] = {128, 64, 256, 0, -64, 1, 96};
         static const int sms[] = {132, 114, 78, 16, 2, 1, 0, -1, INT_MAX};
         static const int utils[] = {100, 90, 50, 1, 0, -5, 1000};
         s.group_align = r.pick(aligns), s.num_sms = r.pick(sms), s.tc_util = r.pick(utils);
         static const char* names[] = {"block_m", "block_n", "num_stages", "cluster_m", "k_splits", "no_such_field"};
         if (r.chance(3)) c.overrides[r.pick(names)] = static_cast<int>(r.uniform(-2, 300));
         return c;
       },
       [](const Call& c) { fp8_gemm_config(c.spec, c.overrides); }},
      {"per_token_cast_to_fp8", [](Rng& r) { return valid_quantize(r, 0); }, run_quantize(&per_token_cast_to_fp8)},
      {"per_block_cast_to_fp8", [](Rng& r) { return valid_quantize(r, 1); }, run_quantize(&per_block_cast_to_fp8)},
      {"per_channel_cast_to_fp8", [](Rng& r) { return valid_quantize(r, 2); },
       run_quantize(&per_channel_cast_to_fp8)},
  };
  return all;
}

// ---- mutations ---------------------------------------------------------------------------------------------------

// A view of random rank, shape, strides and dtype (for the fully random cases).
TensorView random_view(Rng& r, int region) {
  TensorView t;
  t.data = fake_address(region);
  t.dtype = pick_dtype(r);
  t.rank = static_cast<int>(r.uniform(0, TensorView::kMaxRank));
  t.device = r.chance(8) ? static_cast<int>(r.uniform(-2, 3)) : 0;
  for (int d = 0; d < t.rank; ++d) {
    t.shape[d] = r.chance(3) ? hostile_value(r) : r.uniform(0, 600);
    t.strides[d] = r.chance(3) ? hostile_value(r) : r.uniform(0, 4096);
  }
  return t;
}

std::string mutate(Rng& r, Call& c) {
  if (c.operands.empty()) return "nothing to mutate";
  Operand& o = c.operands[r.next() % c.operands.size()];
  TensorView& t = o.view;
  const int d = t.rank > 0 ? static_cast<int>(r.uniform(0, t.rank - 1)) : 0;
  switch (r.uniform(0, 13)) {
    case 0:
      t.dtype = pick_dtype(r);
      return std::string(o.name) + ".dtype=" + std::to_string(static_cast<int>(t.dtype));
    case 1:  // one dimension more or fewer
      if (t.rank < TensorView::kMaxRank && r.chance(2)) {
        for (int i = t.rank; i > 0; --i) t.shape[i] = t.shape[i - 1], t.strides[i] = t.strides[i - 1];
        t.shape[0] = r.chance(2) ? 1 : r.uniform(0, 8);
        t.strides[0] = t.rank > 0 ? wrap_mul(t.shape[1], t.strides[1]) : 1;
        ++t.rank;
      } else if (t.rank > 0) {
        --t.rank;
      }
      return std::string(o.name) + ".rank=" + std::to_string(t.rank);
    case 2:
    case 3:
      if (t.rank > 0) t.shape[d] = r.chance(2) ? hostile_value(r) : wrap_add(t.shape[d], r.uniform(-2, 2));
      return std::string(o.name) + ".shape[" + std::to_string(d) + "]=" + std::to_string(t.shape[d]);
    case 4:
    case 5:
      if (t.rank > 0) {
        t.strides[d] = r.chance(2) ? hostile_value(r) : wrap_add(wrap_mul(t.strides[d], r.uniform(-1, 3)), r.uniform(-1, 1));
      }
      return std::string(o.name) + ".strides[" + std::to_string(d) + "]=" + std::to_string(t.strides[d]);
    case 6: {
      static const uintptr_t offsets[] = {1, 2, 4, 8, 15, 16, 4096};
      const int choice = static_cast<int>(r.uniform(0, 4));
      if (choice == 0) t.data = nullptr;
      if (choice == 1) t.data = reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(t.data) + r.pick(offsets));
      if (choice == 2) t.data = reinterpret_cast<void*>(UINTPTR_MAX - 15);  // ranges that wrap the address space
      if (choice == 3) t.data = reinterpret_cast<void*>(uintptr_t{16});
      if (choice == 4) t.data = reinterpret_cast<void*>(uintptr_t{1} << 63);
      char text[64];
      std::snprintf(text, sizeof(text), "%s.data=%p", o.name, t.data);
      return text;
    }
    case 7: {  // alias another operand, exactly or a little inside it
      const Operand& other = c.operands[r.next() % c.operands.size()];
      t.data = reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(other.view.data) +
                                       (r.chance(2) ? 0 : 16 * static_cast<uintptr_t>(r.uniform(1, 64))));
      return std::string(o.name) + " aliases " + other.name;
    }
    case 8: {
      static const int devices[] = {-1, 1, 3, INT_MAX, INT_MIN, -7};
      t.device = r.pick(devices);
      return std::string(o.name) + ".device=" + std::to_string(t.device);
    }
    case 9:  // only c is optional
      if (std::string(o.name) == "c") o.present = !o.present;
      return std::string(o.name) + (o.present ? " given" : " absent");
    case 10:
      c.options.recipe = c.grouped.recipe = pick_recipe(r);
      if (r.chance(4)) c.options.compiled_dims = r.chance(2) ? "" : "mnk\xff";
      return "recipe (" + std::to_string(c.options.recipe[0]) + ", " + std::to_string(c.options.recipe[1]) + ", " +
             std::to_string(c.options.recipe[2]) + ")";
    case 11:  // the grouped arguments that are not tensors
      if (r.chance(3)) c.grouped.layout = static_cast<ContiguousLayout>(r.uniform(0, 5));
      if (r.chance(2)) c.expected_m = hostile_value(r);
      if (r.chance(2)) c.grouped.expected_m = hostile_value(r);
      if (!c.ks.empty() || r.chance(4)) {
        const int what = static_cast<int>(r.uniform(0, 3));
        if (what == 0) c.ks.push_back(r.chance(2) ? 128 : hostile_value(r));
        if (what == 1 && !c.ks.empty()) c.ks.pop_back();
        if (what == 2 && !c.ks.empty()) c.ks[r.next() % c.ks.size()] = hostile_value(r);
        if (what == 3) c.ks.clear();
      }
      if (!c.layout_ks.empty() && r.chance(2)) {
        c.layout_ks[r.next() % c.layout_ks.size()] = static_cast<int>(r.chance(2) ? hostile_value(r) : r.uniform(-3, 600));
      }
      if (r.chance(3) && !c.layout_ks.empty()) c.layout_ks.pop_back();
      return "grouped arguments (layout " + std::to_string(static_cast<int>(c.grouped.layout)) + ", " +
             std::to_string(c.ks.size()) + " ks, " + std::to_string(c.layout_ks.size()) + " layout ks)";
    case 12: {
      static const int grans[] = {0, -1, 1, 7, 16, 64, 128, 256, 512, INT_MAX, INT_MIN};
      c.gran_k = r.pick(grans);
      c.use_ue8m0 = r.chance(2);
      c.plan_gran_mn = r.pick(grans);
      c.plan_gran_k = r.pick(grans);
      c.plan_groups = static_cast<int>(r.uniform(-3, 9));
      if (r.chance(2)) c.plan_mn = hostile_value(r);
      if (r.chance(2)) c.plan_k = hostile_value(r);
      return "gran_k " + std::to_string(c.gran_k) + ", plan (" + std::to_string(c.plan_mn) + ", " +
             std::to_string(c.plan_k) + ", " + std::to_string(c.plan_gran_mn) + ", " +
             std::to_string(c.plan_gran_k) + ", " + std::to_string(c.plan_groups) + ")";
    }
    default:
      t = random_view(r, static_cast<int>(r.uniform(0, 7)));
      return std::string(o.name) + " random";
  }
}

// ---- the driver --------------------------------------------------------------------------------------------------

char g_case_text[2048];  // what the running case is, for the crash handler

void on_crash(int sig) {
  const char* head = "\nfuzz_validation: the case below ended in signal ";
  [[maybe_unused]] ssize_t n = ::write(STDERR_FILENO, head, strlen(head));
  char number[16];
  const int len = std::snprintf(number, sizeof(number), "%d\n", sig);
  n = ::write(STDERR_FILENO, number, static_cast<size_t>(len));
  n = ::write(STDERR_FILENO, g_case_text, strnlen(g_case_text, sizeof(g_case_text)));
  n = ::write(STDERR_FILENO, "\n", 1);
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

struct Outcome {
  int rejected = 0, unsupported = 0, jit = 0, device = 0, returned = 0;
  int past_validation() const { return jit + device + returned; }
};

class FuzzValidation : public ::testing::Test {
 protected:
  void SetUp() override {
    ::setenv("CUDA_VISIBLE_DEVICES", "", 1);  // before the process's first CUDA call (ctest: one test a process)
    if (gpu_available()) GTEST_SKIP() << "a GPU is visible (the driver was initialised before this test): run alone";
    dir_ = std::filesystem::temp_directory_path() / ("hopgemm_fuzz_validation_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    set_cache_dir(dir_.string());
    set_jit_policy(JitPolicy::kErrorOnMiss);
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGALRM}) ::signal(sig, on_crash);
  }
  void TearDown() override {
    ::alarm(0);
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGALRM}) ::signal(sig, SIG_DFL);
    set_num_sms(0);
    set_jit_policy(JitPolicy::kAllow);
    set_cache_dir("");
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  // Runs case `index` of `seed`; returns "" or what went wrong.
  std::string run_case(uint64_t seed, uint64_t index, Outcome& outcome, std::map<std::string, Outcome>& per_op,
                       bool print) {
    Rng r(seed * 0x100000001b3ull ^ (index + 1) * 0x9e3779b97f4a7c15ull);
    const Op& op = ops()[r.next() % ops().size()];
    static const int sms[] = {0, 0, 0, 1, 16, 78, 114, 132};
    const int num_sms = r.pick(sms);
    Call call = op.valid(r);
    std::string what;
    if (r.chance(8)) {
      for (size_t i = 0; i < call.operands.size(); ++i) call.operands[i].view = random_view(r, static_cast<int>(i));
      what = "every operand random";
    } else {
      for (int i = static_cast<int>(r.uniform(0, 5)); i > 0; --i) what += (what.empty() ? "" : "; ") + mutate(r, call);
    }
    std::string text = "seed " + std::to_string(seed) + " case " + std::to_string(index) + ": " + op.name +
                       ", num_sms " + std::to_string(num_sms) + ", mutations: " + (what.empty() ? "none" : what);
    for (const auto& [name, value] : call.overrides) text += "\n  override " + name + " = " + std::to_string(value);
    if (!call.ks.empty() || !call.layout_ks.empty()) {
      text += "\n  ks";
      for (int64_t k : call.ks) text += " " + std::to_string(k);
      text += "; layout ks";
      for (int k : call.layout_ks) text += " " + std::to_string(k);
    }
    for (const auto& o : call.operands) {
      const TensorView& t = o.view;
      char line[400];
      std::snprintf(line, sizeof(line), "\n  %s%s: data %p dtype %d device %d rank %d shape [%lld %lld %lld %lld] "
                    "strides [%lld %lld %lld %lld]", o.name, o.present ? "" : " (absent)", t.data,
                    static_cast<int>(t.dtype), t.device, t.rank, (long long)t.shape[0], (long long)t.shape[1],
                    (long long)t.shape[2], (long long)t.shape[3], (long long)t.strides[0], (long long)t.strides[1],
                    (long long)t.strides[2], (long long)t.strides[3]);
      text += line;
    }
    std::snprintf(g_case_text, sizeof(g_case_text), "%s", text.c_str());
    if (print) std::printf("%s\n", text.c_str());

    set_num_sms(num_sms);
    ::alarm(10);  // a case is microseconds; ten seconds is a hang
    Outcome& mine = per_op[op.name];
    std::string problem;
    try {
      op.run(call);
      ++outcome.returned, ++mine.returned;
    } catch (const Error& e) {
      const std::string message = e.what();
      switch (e.kind()) {
        case ErrorKind::kInvalidArgument: ++outcome.rejected, ++mine.rejected; break;
        case ErrorKind::kUnsupported: ++outcome.unsupported, ++mine.unsupported; break;
        case ErrorKind::kJit:
          ++outcome.jit, ++mine.jit;
          // error_on_miss over an empty cache: a refusal to load, never a compile.
          if (message.find("error_on_miss") == std::string::npos) problem = "a JIT error that is not the policy's";
          break;
        case ErrorKind::kCuda: ++outcome.device, ++mine.device; break;
      }
      if (message.empty()) problem = "an empty error message";
      if (print) std::printf("-> %s: %s\n", error_kind_name(e.kind()), message.c_str());
      if (!problem.empty()) problem += ": " + message;
    } catch (const std::exception& e) {
      problem = std::string("threw a non-hopgemm exception: ") + e.what();
    } catch (...) {
      problem = "threw something that is not an exception";
    }
    ::alarm(0);
    return problem.empty() ? "" : text + "\n  " + problem;
  }

  std::filesystem::path dir_;
};

TEST_F(FuzzValidation, EveryOpRaisesOrReturnsNeverCrashes) {
  const uint64_t seed = env_u64("HOPGEMM_FUZZ_SEED", 29);
  Outcome outcome;
  std::map<std::string, Outcome> per_op;
  if (const char* one = std::getenv("HOPGEMM_FUZZ_CASE"); one != nullptr && *one != '\0') {
    const std::string problem = run_case(seed, std::strtoull(one, nullptr, 10), outcome, per_op, true);
    EXPECT_EQ(problem, "");
    return;
  }
  const uint64_t cases = env_u64("HOPGEMM_FUZZ_CASES", 100000);
  const auto start = std::chrono::steady_clock::now();
  int failures = 0;
  for (uint64_t i = 0; i < cases; ++i) {
    const std::string problem = run_case(seed, i, outcome, per_op, false);
    if (!problem.empty() && ++failures <= 20) ADD_FAILURE() << problem;
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("fuzz_validation: seed %llu, %llu cases in %.1f s: %d rejected (invalid argument), %d unsupported, "
              "%d past validation (%d stopped at the kernel load, %d at the device, %d returned), %d failures\n",
              static_cast<unsigned long long>(seed), static_cast<unsigned long long>(cases), seconds,
              outcome.rejected, outcome.unsupported, outcome.past_validation(), outcome.jit, outcome.device,
              outcome.returned, failures);
  // The generator must reach past validation for every op, or it is testing nothing but the first check.
  for (const Op& op : ops()) {
    const Outcome& o = per_op[op.name];
    std::printf("  %-56s %5d rejected %4d unsupported %4d past validation\n", op.name, o.rejected, o.unsupported,
                o.past_validation());
    const bool always_unsupported = std::string(op.name) == "k_grouped_fp8_gemm_tn_contiguous";
    const bool planner = std::string(op.name) == "transform_sf_into_required_layout" ||
                         std::string(op.name) == "fp8_gemm_config";  // return their answer, no kernel
    if (cases >= 2000 && !always_unsupported) {
      EXPECT_GT(o.past_validation(), 0) << op.name << ": no case got past validation";
      EXPECT_GT(o.rejected, 0) << op.name << ": no case was rejected";
    }
    if (planner) EXPECT_EQ(o.jit + o.device, 0) << op.name << " plans only";
  }
  EXPECT_EQ(failures, 0);
  // Nothing was compiled or written into the cache.
  EXPECT_TRUE(std::filesystem::is_empty(dir_) || !std::filesystem::exists(dir_ / "kernels") ||
              std::filesystem::is_empty(dir_ / "kernels"));
}

// Each extent x stride and extent x extent product of src/api/grouped_gemm.cpp's checks, reached with hostile values
// whose product passes 2^63: each must be refused as an invalid argument, and a -fsanitize=undefined build (see
// docs/RELIABILITY.md) aborts here on a signed overflow if one comes back (the random cases find them too, but not
// each every run).
TEST_F(FuzzValidation, GroupedChecksMultiplyHostileExtentsWithoutOverflow) {
  const int64_t huge = int64_t{1} << 62;
  struct Site {
    const char* what;
    const char* op;
    std::function<void(Call&)> mutate;
  };
  const auto op_named = [](const char* name) -> const Op& {
    for (const Op& op : ops())
      if (std::string(op.name) == name) return op;
    throw std::logic_error(std::string("no op ") + name);
  };
  const Site sites[] = {
      {"N x b.stride(1) (groups stacked along N)", "m_grouped_fp8_gemm_nt_contiguous",
       [&](Call& c) { c.at("b").shape[0] = 2, c.at("b").strides[1] = huge; }},
      {"G x N (b's groups x N)", "m_grouped_fp8_gemm_nt_contiguous",
       [&](Call& c) {
         TensorView& b = c.at("b");
         b.shape[0] = huge, b.shape[1] = 384, b.strides[0] = 0, b.strides[1] = 0;
       }},
      {"G x M_max (a's rows, rank 3)", "m_grouped_fp8_gemm_nt_masked",
       [&](Call& c) { c.at("a").shape[0] = huge, c.at("a").shape[1] = 384; }},
      {"M_max x a.stride(1)", "m_grouped_fp8_gemm_nt_masked",
       [&](Call& c) {
         TensorView& a = c.at("a");
         a.shape[0] = 2, a.shape[1] = huge / 2, a.strides[1] = 384;
         c.at("b").shape[0] = 2;
       }},
      {"M_max x d.stride(1)", "m_grouped_fp8_gemm_nt_masked",
       [&](Call& c) {
         c.at("a").shape[0] = 2, c.at("b").shape[0] = 2, c.at("sfb").shape[0] = 2;
         c.at("d").shape[0] = 2, c.at("d").strides[1] = huge;
       }},
      {"M_max x sfa.stride(1), sf_k x sfa.stride(2)", "m_grouped_fp8_gemm_nt_masked",
       [&](Call& c) {
         for (const char* name : {"a", "b", "sfb", "d", "sfa", "masked_m"}) c.at(name).shape[0] = 2;
         c.at("sfa").strides[1] = huge, c.at("sfa").strides[2] = huge;
       }},
      {"sum(ks) x M, sum(ks) x N, G x M", "k_grouped_fp8_gemm_nt_contiguous",
       [&](Call& c) {
         c.at("d").shape[1] = huge, c.at("d").shape[2] = huge;
         c.at("d").strides[0] = 0, c.at("d").strides[1] = 0;
       }},
  };
  int refused = 0;
  for (const Site& site : sites) {
    for (uint64_t seed = 0; seed < 8; ++seed) {
      Rng r(seed + 1);
      const Op& op = op_named(site.op);
      Call call = op.valid(r);
      site.mutate(call);
      try {
        op.run(call);
        ADD_FAILURE() << site.what << " (" << site.op << ", seed " << seed << "): accepted";
      } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument) << site.what << ": " << e.what();
        ++refused;
      }
    }
  }
  EXPECT_EQ(refused, 8 * static_cast<int>(std::size(sites)));
}

}  // namespace
}  // namespace hopgemm
