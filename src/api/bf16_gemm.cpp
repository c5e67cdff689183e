// bf16_gemm_{nt,nn,tn,tt}: validate -> problem -> config (memoised) -> kernel (cached) -> params from the host kit ->
// launch. The BF16 family's rendering and its precompile entry.
#include "hopgemm/bf16_gemm.hpp"
#include "hopgemm/tuning.hpp"

#include <cuda_runtime_api.h>

#include <cstdio>
#include <map>
#include <string>
#include <utility>

#include "api/bf16_gemm_internal.hpp"
#include "api/gemm_internal.hpp"
#include "api/sm90_launch.hpp"
#include "api/validate.hpp"
#include "heuristics/memo.hpp"
#include "hopgemm/error.hpp"
#include "hopgemm/runtime.hpp"
#include "jit/kernel_cache.hpp"
#include "runtime/env.hpp"
#include "runtime/workspace.hpp"

namespace hopgemm {
namespace {

using device::Sm90Bf16GemmConfig;
using device::Sm90Bf16GemmParams;

struct ResolvedBf16Gemm {
  heuristics::Bf16GemmProblem problem;
  bool copy_c = false;  // C distinct from D: copy it into D, then accumulate
};

// Whether operand t [rows, k] is K-major (K contiguous) or MN-major (its rows contiguous); else an error. A dimension
// of one element has any stride.
bool k_major_operand(const api::Validator& v, const TensorView& t, const char* name) {
  if (t.size(1) <= 1 || t.stride(1) == 1) return true;
  if (t.size(0) <= 1 || t.stride(0) == 1) return false;
  v.fail(name, "must be K-major or MN-major (one unit stride), got strides " + api::stride_string(t));
}

ResolvedBf16Gemm validate(const char* op, const TensorView& a, const TensorView& b, const TensorView& d,
                          const TensorView* c) {
  api::Validator v(op);
  for (auto [t, name] : {std::pair{&a, "a"}, {&b, "b"}, {&d, "d"}}) {
    v.on_device(*t, name);
    v.rank(*t, name, {2});
  }
  v.dtype(a, "a", {DType::kBFloat16});
  v.dtype(b, "b", {DType::kBFloat16});
  v.dtype(d, "d", {DType::kBFloat16, DType::kFloat32});
  const int64_t m = a.size(0), k = a.size(1), n = b.size(0);
  v.shape(b, "b", {n, k});
  v.shape(d, "d", {m, n});
  v.inner_contiguous(d, "d");
  v.same_device(a, "a", b, "b");
  v.same_device(a, "a", d, "d");
  const bool a_k_major = k_major_operand(v, a, "a"), b_k_major = k_major_operand(v, b, "b");
  const bool fp32_out = d.dtype == DType::kFloat32;
  if (k % 8 != 0) v.fail("a", "must have K a multiple of 8 (TMA rows of 16 bytes), got K = " + std::to_string(k));
  if (n % (fp32_out ? 4 : 8) != 0) {
    v.fail("d", std::string("must have N a multiple of ") + (fp32_out ? "4 (float32" : "8 (bfloat16") +
                    " rows of 16 bytes), got N = " + std::to_string(n));
  }
  if (m > INT32_MAX || n > INT32_MAX || k > INT32_MAX) v.fail("a", "has a dimension beyond 2^31 - 1");
  if (m > 0 && n > 0) {
    // TMA: an MN-major operand's K stride is the leading one of its transposed view.
    if (k > 0) {
      v.tma_aligned(a_k_major ? a : transposed(a), "a");
      v.tma_aligned(b_k_major ? b : transposed(b), "b");
    }
    v.tma_aligned(d, "d");
    v.no_overlap(d, "d", a, "a");
    v.no_overlap(d, "d", b, "b");
  }
  ResolvedBf16Gemm r;
  heuristics::Bf16GemmProblem& p = r.problem;
  if (c != nullptr) {
    r.copy_c = v.dense_accumulator(*c, d, a, m, n);
    p.accumulate = 1;
  }
  p.m = m;
  p.n = n;
  p.k = k;
  p.a_k_major = a_k_major ? 1 : 0;
  p.b_k_major = b_k_major ? 1 : 0;
  p.out_dtype = fp32_out ? device::kOutFp32 : device::kOutBf16;
  // The device is asked only once every argument passed: a bad argument is reported as such on any machine.
  p.num_sms = get_num_sms(a.device);
  p.tc_util = get_tc_util();
  return r;
}

const heuristics::Bf16GemmChoice& bf16_gemm_choice(const heuristics::Bf16GemmProblem& problem) {
  static heuristics::Memo<heuristics::Bf16GemmProblem, heuristics::Bf16GemmChoice> memo;
  return memo.get(problem, heuristics::choose_bf16_gemm_config, [](const heuristics::Bf16GemmChoice& ch) {
    if (runtime::env().print_configs || runtime::env().jit_debug) {
      std::fprintf(stderr, "hopgemm: %s\n", heuristics::describe(ch).c_str());
    }
  });
}

// `choice` with the tunable fields and launch parameters in `overrides` set by name (num_stages follows a new tile
// unless overridden); Error(kInvalidArgument) naming `op` for an unknown or fixed name or a config that does not fit
// `p`.
heuristics::Bf16GemmChoice with_overrides(heuristics::Bf16GemmChoice choice, const heuristics::Bf16GemmProblem& p,
                                          const std::map<std::string, int>& overrides, const char* op) {
  Sm90Bf16GemmConfig& cfg = choice.config;
  for (const auto& [name, value] : overrides) {
    int* field = name == "num_sms" ? &choice.launch.num_sms : name == "raster_band" ? &choice.launch.raster_band : nullptr;
#define HOPGEMM_MATCH_FIELD(field_name, default_value, tunable) \
    if (tunable && name == #field_name) field = &cfg.field_name;
    HOPGEMM_SM90_BF16_GEMM_FIELDS(HOPGEMM_MATCH_FIELD)
#undef HOPGEMM_MATCH_FIELD
    if (field == nullptr) {
      throw Error(ErrorKind::kInvalidArgument, std::string(op) + ": unknown or fixed config field '" + name + "'");
    }
    *field = value;
  }
  if (!overrides.contains("num_stages")) cfg.num_stages = heuristics::deepest_stages(cfg);
  const char* why = device::config_violation(cfg);
  if (why == nullptr && !device::k_splits_fit(p.k, device::kBf16BlockK, cfg.k_splits)) why = "a split has no k-blocks";
  if (why == nullptr && (choice.launch.num_sms < device::cluster_size(cfg) || choice.launch.raster_band < 1)) {
    why = "num_sms must hold a cluster and raster_band be >= 1";
  }
  if (why != nullptr) {
    throw Error(ErrorKind::kInvalidArgument, std::string(op) + ": the config does not fit the problem (" + why +
                                                 "): " + heuristics::describe(p));
  }
  return choice;
}

void run_bf16_gemm(const char* op, const TensorView& a, const TensorView& b, const TensorView& d, const TensorView* c,
                   cudaStream_t stream, const std::map<std::string, int>* overrides = nullptr) {
  const ResolvedBf16Gemm r = validate(op, a, b, d, c);
  const heuristics::Bf16GemmProblem& p = r.problem;
  if (p.m == 0 || p.n == 0) return;
  if (p.k == 0) {
    api::sm90::prefill_output(d, c, r.copy_c, stream);
    return;
  }
  const heuristics::Bf16GemmChoice& picked =
      api::sm90::fitting(op, bf16_gemm_choice(p), [&] { return heuristics::describe(p); });
  const heuristics::Bf16GemmChoice choice = overrides ? with_overrides(picked, p, *overrides, op) : picked;
  const Sm90Bf16GemmConfig& cfg = choice.config;
  const api::sm90::GemmTile tile = api::sm90::gemm_tile(cfg, device::smem_bytes(cfg));
  // Everything that may refuse inside a capture (the kernel load, the workspace) comes before anything is enqueued.
  const jit::LoadedKernel& kernel = api::bf16_gemm_kernel(cfg, op, stream);
  const auto scratch = api::sm90::splitk_scratch(tile, cfg.k_splits, p.m, p.n);
  const runtime::Workspace workspace(scratch.counter_bytes, scratch.partial_bytes, stream, op);
  Sm90Bf16GemmParams params{};
  api::sm90::set_operand_maps(params, tile, a, p.m, b, p.n, p.k, /*a_tail=*/true, op, p.a_k_major == 1,
                              p.b_k_major == 1);
  params.tma_d = api::sm90::d_map(tile, d, p.m, p.n, op);
  api::sm90::set_gemm_schedule(params, tile, cfg.k_splits, p.m, p.n, p.k, choice.launch.raster_band, d,
                               workspace.partials(), workspace.counters());
  if (r.copy_c) api::sm90::prefill_output(d, c, r.copy_c, stream);
  api::bf16_gemm_launch(kernel, choice, &params, a.device, stream);
}

}  // namespace

namespace api {

const jit::LoadedKernel& bf16_gemm_kernel(const Sm90Bf16GemmConfig& config, const char* op, cudaStream_t stream) {
  static jit::KernelCache<Sm90Bf16GemmConfig> cache(&api::render_sm90_bf16_gemm);
  static jit::KernelCache<Sm90Bf16GemmConfig> batch_sum_cache(
      [](const Sm90Bf16GemmConfig& c) { return render_bf16_config(kSm90Bf16BatchSumFamily, c); });
  return (config.grouping == device::kGroupingBatchSum ? batch_sum_cache : cache).get(config, op, stream);
}

void bf16_gemm_launch(const jit::LoadedKernel& kernel, const heuristics::Bf16GemmChoice& choice,
                      const Sm90Bf16GemmParams* params, int device, cudaStream_t stream) {
  sm90::launch_gemm(kernel, sm90::gemm_tile(choice.config, device::smem_bytes(choice.config)), choice.launch.num_sms,
                    params, device, stream);
}

heuristics::Bf16GemmChoice bf16_grouped_choice(const char* op, const heuristics::Bf16GemmProblem& problem) {
  const heuristics::Bf16GemmChoice& choice =
      sm90::fitting(op, bf16_gemm_choice(problem), [&] { return heuristics::describe(problem); });
  const char* who = nullptr;
  const std::map<std::string, int>* overrides = grouped_config_overrides(&who);
  return overrides == nullptr ? choice : with_overrides(choice, problem, *overrides, who);
}

jit::KernelSource render_sm90_bf16_gemm(const device::Sm90Bf16GemmConfig& c) {
  return render_bf16_config(kSm90Bf16GemmFamily, c);
}

jit::KernelSource render_bf16_config(const jit::KernelFamily& family, const device::Sm90Bf16GemmConfig& c) {
  return jit::render_kernel(family, [&](jit::ConfigWriter& w) {
#define HOPGEMM_WRITE_FIELD(name, default_value, tunable) w.field(#name, c.name);
    HOPGEMM_SM90_BF16_GEMM_FIELDS(HOPGEMM_WRITE_FIELD)
#undef HOPGEMM_WRITE_FIELD
  });
}

heuristics::Bf16GemmProblem bf16_suite_problem(const SuiteGemm& gemm, int num_sms) {
  heuristics::Bf16GemmProblem p;
  p.m = gemm.m;
  p.n = gemm.n;
  p.k = gemm.k;
  p.num_sms = num_sms;
  p.tc_util = get_tc_util();
  if (gemm.role == GemmRole::kDgrad) p.b_k_major = 0;
  if (gemm.role == GemmRole::kWgrad) {
    p.a_k_major = p.b_k_major = 0;
    p.out_dtype = device::kOutFp32;
    p.accumulate = 1;
  }
  return p;
}

std::vector<jit::KernelSource> bf16_gemm_suite_sources(const std::string& suite, int num_sms) {
  std::vector<heuristics::Bf16GemmProblem> problems;
  if (suite == kMoeSuite) {
    // The MoE suite's grouped GEMMs as the BF16 ops build them (the K-grouped one over K ranges of MN-major operands);
    // its contiguous cases (those it lists with group ids) also with an MN-major B, in both contiguous groupings.
    for (const heuristics::Fp8GemmProblem& f : moe_suite_problems(num_sms)) {
      if (f.grouping == device::kGroupingK) {
        problems.push_back(heuristics::make_bf16_k_grouped_problem(f.m, f.n, f.k, f.num_groups, num_sms, f.tc_util));
        continue;
      }
      problems.push_back(heuristics::make_bf16_m_grouped_problem(f.grouping, f.m, f.n, f.k, f.num_groups,
                                                                 /*b_k_major=*/true, f.group_align, num_sms, f.tc_util));
      if (f.grouping != device::kGroupingMIds) continue;
      for (int grouping : {device::kGroupingMIds, device::kGroupingMRanges}) {
        problems.push_back(heuristics::make_bf16_m_grouped_problem(grouping, f.m, f.n, f.k, f.num_groups,
                                                                   /*b_k_major=*/false, f.group_align, num_sms,
                                                                   f.tc_util));
      }
    }
  } else {
    for (const SuiteGemm& g : suite_gemms(suite)) problems.push_back(bf16_suite_problem(g, num_sms));
  }
  std::vector<jit::KernelSource> sources;
  for (const auto& p : problems) {
    const auto choice = heuristics::choose_bf16_gemm_config(p);
    if (choice.num_tiles > 0) sources.push_back(render_sm90_bf16_gemm(choice.config));
  }
  return sources;
}

}  // namespace api

void bf16_gemm_nt(const TensorView& a, const TensorView& b, const TensorView& d, const TensorView* c,
                  const GemmOptions&, cudaStream_t stream) {
  run_bf16_gemm("bf16_gemm_nt", a, b, d, c, stream);
}

void bf16_gemm_nn(const TensorView& a, const TensorView& b, const TensorView& d, const TensorView* c,
                  const GemmOptions&, cudaStream_t stream) {
  run_bf16_gemm("bf16_gemm_nn", a, transposed(b), d, c, stream);
}

void bf16_gemm_tn(const TensorView& a, const TensorView& b, const TensorView& d, const TensorView* c,
                  const GemmOptions&, cudaStream_t stream) {
  run_bf16_gemm("bf16_gemm_tn", transposed(a), transposed(b), d, c, stream);
}

void bf16_gemm_tt(const TensorView& a, const TensorView& b, const TensorView& d, const TensorView* c,
                  const GemmOptions&, cudaStream_t stream) {
  run_bf16_gemm("bf16_gemm_tt", transposed(a), b, d, c, stream);
}

void bf16_gemm_with_overrides(const std::string& layout, const TensorView& a, const TensorView& b, const TensorView& d,
                              const TensorView* c, const std::map<std::string, int>& overrides, cudaStream_t stream) {
  constexpr const char* kOp = "bf16_gemm_with_overrides";
  if (layout == "nt") return run_bf16_gemm(kOp, a, b, d, c, stream, &overrides);
  if (layout == "nn") return run_bf16_gemm(kOp, a, transposed(b), d, c, stream, &overrides);
  if (layout == "tn") return run_bf16_gemm(kOp, transposed(a), transposed(b), d, c, stream, &overrides);
  if (layout == "tt") return run_bf16_gemm(kOp, transposed(a), b, d, c, stream, &overrides);
  throw Error(ErrorKind::kInvalidArgument, std::string(kOp) + ": layout must be nt, nn, tn or tt, got '" + layout + "'");
}

}  // namespace hopgemm
