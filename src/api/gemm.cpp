// fp8_gemm_{nt,nn,tn,tt}: validate -> problem -> config (memoised) -> kernel (cached) -> launch.
#include "hopgemm/gemm.hpp"
#include "hopgemm/tuning.hpp"

#include <cuda_runtime_api.h>

#include <cstdio>
#include <map>
#include <string>
#include <utility>

#include "api/fp8_scales.hpp"
#include "api/gemm_internal.hpp"
#include "api/gemm_sources.hpp"
#include "api/sm90_launch.hpp"
#include "api/validate.hpp"
#include "heuristics/memo.hpp"
#include "heuristics/sm90_fp8_gemm.hpp"
#include "hopgemm/error.hpp"
#include "hopgemm/runtime.hpp"
#include "jit/kernel_cache.hpp"
#include "runtime/env.hpp"
#include "runtime/workspace.hpp"

namespace hopgemm {
namespace {

using device::Sm90Fp8GemmConfig;
using device::Sm90Fp8GemmParams;
using api::SfLayout;
using api::sf_layout;

struct ResolvedGemm {
  heuristics::Fp8GemmProblem problem;
  int64_t d_cols = 0;                     // D's columns: N, or more with head splits
  std::array<int, 3> head_splits{};       // skip_head_mid's {left, mid, right}; mid == 0: none
  bool copy_c = false;  // C distinct from D: copy it into D, then accumulate
  api::RowScales sfa;
  api::RowScales sfb_rows;      // 1D1D
  api::BlockScales sfb_blocks;  // 1D2D
};

// skip_head_mid's head splits against the GEMM's N (and K, C, D's element size); returns D's columns.
int64_t check_head_splits(api::Validator& v, const std::array<int, 3>& splits, int64_t n, int64_t k, int out_bytes,
                          const TensorView* c) {
  const auto [left, mid, right] = splits;
  const std::string given = "(" + std::to_string(left) + ", " + std::to_string(mid) + ", " + std::to_string(right) + ")";
  const int box_cols = 128 / out_bytes;
  if (left < 0 || mid <= 0 || right < 0 || left + right == 0) {
    v.fail("head_splits", "must be (left, mid, right) with mid > 0 and left + right > 0, got " + given);
  }
  if (left % box_cols != 0 || mid % box_cols != 0 || right % box_cols != 0) {
    v.fail("head_splits", "must be multiples of " + std::to_string(box_cols) + " columns (128 bytes of d, one TMA store box), got " + given);
  }
  if (n % (left + right) != 0) {
    v.fail("b", "must have N a multiple of left + right = " + std::to_string(left + right) + " (head_splits " + given +
                    "), got N = " + std::to_string(n));
  }
  if (k == 0) v.fail("a", "must have K > 0 (skip_head_mid writes only the heads' columns of D)");
  if (c != nullptr) v.fail("c", "is not taken by skip_head_mid (no accumulation)");
  return n / (left + right) * (left + mid + right);
}

// head_splits: skip_head_mid's {left, mid, right} (D [M, N / (left + right) * (left + mid + right)]), else null.
ResolvedGemm validate(const char* op, const TensorView& a, const TensorView& sfa, const TensorView& b,
                      const TensorView& sfb, const TensorView& d, const TensorView* c, const GemmOptions& options,
                      const std::array<int, 3>* head_splits = nullptr) {
  api::Validator v(op);
  for (auto [t, name] : {std::pair{&a, "a"}, {&b, "b"}, {&d, "d"}}) {
    v.on_device(*t, name);
    v.rank(*t, name, {2});
  }
  v.dtype(a, "a", {DType::kFloat8E4M3});
  v.dtype(b, "b", {DType::kFloat8E4M3});
  v.dtype(d, "d", {DType::kBFloat16, DType::kFloat32});
  const int64_t m = a.size(0), k = a.size(1), n = b.size(0);
  v.shape(b, "b", {n, k});
  const bool fp32_out = d.dtype == DType::kFloat32;
  ResolvedGemm r;
  r.d_cols = n;
  if (head_splits != nullptr) {
    r.head_splits = *head_splits;
    r.d_cols = check_head_splits(v, *head_splits, n, k, fp32_out ? 4 : 2, c);
  }
  v.shape(d, "d", {m, r.d_cols});
  if (k > 1 && a.stride(1) != 1) v.fail("a", "must be K-major (stride(-1) == 1) on SM90, got strides " + api::stride_string(a));
  if (k > 1 && b.stride(1) != 1) v.fail("b", "must be K-major (stride(-1) == 1) on SM90, got strides " + api::stride_string(b));
  v.inner_contiguous(d, "d");
  v.same_device(a, "a", b, "b");
  v.same_device(a, "a", d, "d");
  if (k % 16 != 0) v.fail("a", "must have K a multiple of 16 (TMA rows of 16 bytes), got K = " + std::to_string(k));
  if (n % (fp32_out ? 4 : 8) != 0) {
    v.fail("d", std::string("must have N a multiple of ") + (fp32_out ? "4 (float32" : "8 (bfloat16") +
                    " rows of 16 bytes), got N = " + std::to_string(n));
  }
  if (m > INT32_MAX || n > INT32_MAX || k > INT32_MAX) v.fail("a", "has a dimension beyond 2^31 - 1");

  heuristics::Fp8GemmCall call;
  call.m = m;
  call.n = n;
  call.k = k;
  call.out_dtype = fp32_out ? device::kOutFp32 : device::kOutBf16;

  const int64_t sf_k = device::ceil_div<int64_t>(k, 128);
  // Recipe: explicit, else inferred from sfb's shape (per 128x128 block or per channel).
  const bool per_channel_sfb = sfb.rank == 2 && sfb.size(0) == n && n != device::ceil_div<int64_t>(n, 128);
  call.recipe = api::resolve_recipe(v, options.recipe, per_channel_sfb ? device::kRecipe1D1D : device::kRecipe1D2D,
                                    {device::kRecipe1D2D, device::kRecipe1D1D});
  if (head_splits != nullptr && call.recipe != device::kRecipe1D2D) {
    v.fail("recipe", "must be (1, 128, 128) for skip_head_mid (sfb per 128x128 block, as DeepGEMM's SM90 kernel takes)");
  }
  const bool sfa_row_major = sf_layout(v, sfa, "sfa", m, sf_k, /*allow_mn_major=*/true) == SfLayout::kRowMajor;
  call.sfa = {sfa_row_major ? 1 : 0, sfa.stride(0), reinterpret_cast<uintptr_t>(sfa.data)};
  r.sfa = {sfa, m, sf_k, sfa_row_major, sfa.stride(0)};
  if (call.recipe == device::kRecipe1D2D) {
    // The block scales are few (ceil(N/128) x ceil(K/128)) and read per element: either layout, same kernel.
    const SfLayout layout = sf_layout(v, sfb, "sfb", device::ceil_div<int64_t>(n, 128), sf_k, /*allow_mn_major=*/true);
    r.sfb_blocks = {sfb.data, sfb.stride(0), layout == SfLayout::kRowMajor ? 1 : sfb.stride(1), 0};
  } else {
    const bool sfb_row_major = sf_layout(v, sfb, "sfb", n, sf_k, /*allow_mn_major=*/true) == SfLayout::kRowMajor;
    call.sfb = {sfb_row_major ? 1 : 0, sfb.stride(0), reinterpret_cast<uintptr_t>(sfb.data)};
    r.sfb_rows = {sfb, n, sf_k, sfb_row_major, sfb.stride(0)};
  }
  v.same_device(a, "a", sfa, "sfa");
  v.same_device(a, "a", sfb, "sfb");

  if (m > 0 && n > 0) {
    if (k > 0) {
      v.tma_aligned(a, "a");
      v.tma_aligned(b, "b");
    }
    v.tma_aligned(d, "d");
    for (auto [t, name] : {std::pair{&a, "a"}, {&b, "b"}, {&sfa, "sfa"}, {&sfb, "sfb"}}) v.no_overlap(d, "d", *t, name);
  }
  if (c != nullptr) {
    r.copy_c = v.dense_accumulator(*c, d, a, m, n);
    call.accumulate = 1;
  }
  // The device is asked only once every argument passed: a bad argument is reported as such on any machine.
  call.num_sms = get_num_sms(a.device);
  call.tc_util = get_tc_util();
  r.problem = heuristics::make_fp8_gemm_problem(call);
  return r;
}

// set_grouped_config_overrides's fields for this thread (empty: none).
thread_local std::map<std::string, int> thread_grouped_overrides;

heuristics::Memo<heuristics::Fp8GemmProblem, heuristics::Fp8GemmChoice>& choice_memo() {
  static heuristics::Memo<heuristics::Fp8GemmProblem, heuristics::Fp8GemmChoice> memo;
  return memo;
}


Sm90Fp8GemmParams make_params(const Sm90Fp8GemmConfig& cfg, const heuristics::Fp8GemmLaunch& launch,
                              const ResolvedGemm& r, const TensorView& a, const TensorView& b, const TensorView& d,
                              void* workspace, void* tile_counters, const char* op) {
  const auto& p = r.problem;
  const api::sm90::GemmTile tile = api::sm90::gemm_tile(cfg, device::smem_bytes(cfg));
  Sm90Fp8GemmParams params{};
  api::sm90::set_operand_maps(params, tile, a, p.m, b, p.n, p.k, /*a_tail=*/true, op);
  params.tma_d = api::sm90::d_map(tile, d, p.m, r.d_cols, op);
  const bool per_row_sfb = cfg.recipe == device::kRecipe1D1D;
  api::set_fp8_scales(params.scales, cfg, r.sfa, per_row_sfb ? &r.sfb_rows : nullptr,
                      per_row_sfb ? nullptr : &r.sfb_blocks, op);
  api::sm90::set_gemm_schedule(params, tile, cfg.k_splits, p.m, p.n, p.k, launch.raster_band, d, workspace,
                               tile_counters);
  return params;
}

void launch_fp8_gemm(const char* op, const heuristics::Fp8GemmChoice& choice, const ResolvedGemm& r,
                     const TensorView& a, const TensorView& b, const TensorView& d, cudaStream_t stream) {
  const Sm90Fp8GemmConfig& cfg = choice.config;
  const auto& p = r.problem;
  const jit::LoadedKernel& kernel = api::fp8_gemm_kernel(cfg, op, stream);
  // Split-K: everything that may refuse inside a capture (the kernel load, the workspace) comes before the
  // launch, so a refused call enqueues nothing.
  const auto scratch =
      api::sm90::splitk_scratch(api::sm90::gemm_tile(cfg, device::smem_bytes(cfg)), cfg.k_splits, p.m, p.n);
  const runtime::Workspace workspace(scratch.counter_bytes, scratch.partial_bytes, stream, op);  // held until the launch
  const Sm90Fp8GemmParams params =
      make_params(cfg, choice.launch, r, a, b, d, workspace.partials(), workspace.counters(), op);
  api::fp8_gemm_launch(kernel, choice, &params, a.device, stream);
}

// Validation, zero-size handling and the C prefill shared by every entry point; returns false when there is nothing
// left for a kernel to do. `check_kernel` (which may still refuse the call) runs before anything is enqueued.
template <class CheckKernel>
bool prepare(const char* op, const TensorView& a, const TensorView& sfa, const TensorView& b, const TensorView& sfb,
             const TensorView& d, const TensorView* c, const GemmOptions& options, cudaStream_t stream,
             ResolvedGemm& r, CheckKernel&& check_kernel, const std::array<int, 3>* head_splits = nullptr) {
  r = validate(op, a, sfa, b, sfb, d, c, options, head_splits);
  const auto& p = r.problem;
  if (p.m == 0 || p.n == 0) return false;
  if (p.k != 0) check_kernel();
  if (p.k == 0 || r.copy_c) api::sm90::prefill_output(d, c, r.copy_c, stream);
  return p.k != 0;
}

void run_fp8_gemm(const char* op, const TensorView& a, const TensorView& sfa, const TensorView& b,
                  const TensorView& sfb, const TensorView& d, const TensorView* c, const GemmOptions& options,
                  cudaStream_t stream) {
  ResolvedGemm r;
  const heuristics::Fp8GemmChoice* choice = nullptr;
  const bool run = prepare(op, a, sfa, b, sfb, d, c, options, stream, r, [&] {
    choice = &api::sm90::fitting(op, api::fp8_gemm_choice(r.problem), [&] { return heuristics::describe(r.problem); });
  });
  if (run) launch_fp8_gemm(op, *choice, r, a, b, d, stream);
}

// Why `choice` cannot run problem `p` (nullptr: it can).
const char* config_mismatch(const heuristics::Fp8GemmChoice& choice, const heuristics::Fp8GemmProblem& p) {
  const auto& config = choice.config;
  if (config.recipe != p.recipe || config.out_dtype != p.out_dtype || config.accumulate != p.accumulate ||
      config.sfa_k_major != p.sfa_k_major || config.sfb_k_major != p.sfb_k_major) {
    return "its recipe, out_dtype, accumulate or scale layouts differ from the problem's";
  }
  if (config.sf_chunks == 1 && p.sf_rows_tma == 0) return "sf_chunks needs scale rows that are 16-byte aligned";
  if (const char* rule = device::config_violation(config)) return rule;
  if (!device::k_splits_fit(p.k, config.k_splits)) return "k_splits leaves a split without k-blocks";
  if (choice.launch.num_sms < device::cluster_size(config) || choice.launch.raster_band < 1) {
    return "num_sms must hold a cluster and raster_band be >= 1";
  }
  return nullptr;
}

}  // namespace

namespace api {

const jit::LoadedKernel& fp8_gemm_kernel(const device::Sm90Fp8GemmConfig& config, const char* op, cudaStream_t stream) {
  static jit::KernelCache<Sm90Fp8GemmConfig> cache(&api::render_sm90_fp8_gemm);
  return cache.get(config, op, stream);
}

void fp8_gemm_launch(const jit::LoadedKernel& kernel, const heuristics::Fp8GemmChoice& choice,
                     const device::Sm90Fp8GemmParams* params, int device, cudaStream_t stream) {
  sm90::launch_gemm(kernel, sm90::gemm_tile(choice.config, device::smem_bytes(choice.config)), choice.launch.num_sms,
                    params, device, stream);
}

const heuristics::Fp8GemmChoice& fp8_gemm_choice(const heuristics::Fp8GemmProblem& problem) {
  return choice_memo().get(problem, heuristics::choose_fp8_gemm_config, [](const heuristics::Fp8GemmChoice& ch) {
    if (runtime::env().print_configs || runtime::env().jit_debug) {
      std::fprintf(stderr, "hopgemm: %s\n", heuristics::describe(ch).c_str());
    }
  });
}

const std::map<std::string, int>* grouped_config_overrides(const char** who) {
  if (!thread_grouped_overrides.empty()) {
    *who = "set_grouped_config_overrides";
    return &thread_grouped_overrides;
  }
  if (!runtime::env().grouped_config) return nullptr;
  *who = "HOPGEMM_GROUPED_CONFIG";
  static const std::map<std::string, int> overrides = parse_config_overrides(*runtime::env().grouped_config, *who);
  return &overrides;
}

heuristics::Fp8GemmChoice fp8_grouped_choice(const char* op, const heuristics::Fp8GemmProblem& problem) {
  const heuristics::Fp8GemmChoice& choice =
      sm90::fitting(op, fp8_gemm_choice(problem), [&] { return heuristics::describe(problem); });
  const char* who = nullptr;
  const std::map<std::string, int>* overrides = grouped_config_overrides(&who);
  if (overrides == nullptr) return choice;
  const heuristics::Fp8GemmChoice changed = apply_config_overrides(choice, *overrides, who);
  if (const char* rule = device::config_violation(changed.config)) {
    throw Error(ErrorKind::kInvalidArgument, std::string(op) + ": " + who + " makes an invalid config: " + rule);
  }
  return changed;
}

heuristics::Fp8GemmProblem fp8_gemm_problem(const TensorView& a, const TensorView& sfa, const TensorView& b,
                                            const TensorView& sfb, const TensorView& d, const TensorView* c,
                                            const GemmOptions& options) {
  return validate("fp8_gemm_nt", a, sfa, b, sfb, d, c, options).problem;
}

void fp8_gemm_nt_with_config(const TensorView& a, const TensorView& sfa, const TensorView& b, const TensorView& sfb,
                             const TensorView& d, const TensorView* c, const GemmOptions& options,
                             const heuristics::Fp8GemmChoice& choice, cudaStream_t stream) {
  ResolvedGemm r;
  const auto check_config = [&] {
    if (const char* why = config_mismatch(choice, r.problem)) {
      throw Error(ErrorKind::kInvalidArgument, std::string("fp8_gemm_nt_with_config: the config does not fit the problem (") +
                                                   why + "): " + heuristics::describe(r.problem));
    }
  };
  if (!prepare("fp8_gemm_nt", a, sfa, b, sfb, d, c, options, stream, r, check_config)) return;
  launch_fp8_gemm("fp8_gemm_nt", choice, r, a, b, d, stream);
}

}  // namespace api

TensorView transposed(const TensorView& t) {
  TensorView out = t;
  if (t.rank >= 2) {
    std::swap(out.shape[t.rank - 1], out.shape[t.rank - 2]);
    std::swap(out.strides[t.rank - 1], out.strides[t.rank - 2]);
  }
  return out;
}

void fp8_gemm_nt(const TensorView& a, const TensorView& sfa, const TensorView& b, const TensorView& sfb,
                 const TensorView& d, const TensorView* c, const GemmOptions& options, cudaStream_t stream) {
  run_fp8_gemm("fp8_gemm_nt", a, sfa, b, sfb, d, c, options, stream);
}

void fp8_gemm_nt_skip_head_mid(const TensorView& a, const TensorView& sfa, const TensorView& b, const TensorView& sfb,
                               const TensorView& d, const std::array<int, 3>& head_splits, const GemmOptions& options,
                               cudaStream_t stream) {
  constexpr const char* op = "fp8_gemm_nt_skip_head_mid";
  ResolvedGemm r;
  heuristics::Fp8GemmChoice choice;
  const auto choose = [&] {
    // The plain GEMM's choice (tiles, pair, split-K) with the epilogue's columns moved.
    choice = api::sm90::fitting(op, api::fp8_gemm_choice(r.problem), [&] { return heuristics::describe(r.problem); });
    choice.config.head_left = r.head_splits[0];
    choice.config.head_mid = r.head_splits[1];
    choice.config.head_right = r.head_splits[2];
    if (const char* rule = device::config_violation(choice.config)) {
      throw Error(ErrorKind::kUnsupported, std::string(op) + ": no kernel configuration fits (" + rule + "): " +
                                               heuristics::describe(choice));
    }
  };
  if (prepare(op, a, sfa, b, sfb, d, nullptr, options, stream, r, choose, &head_splits)) {
    launch_fp8_gemm(op, choice, r, a, b, d, stream);
  }
}

void fp8_gemm_nn(const TensorView& a, const TensorView& sfa, const TensorView& b, const TensorView& sfb,
                 const TensorView& d, const TensorView* c, const GemmOptions& options, cudaStream_t stream) {
  run_fp8_gemm("fp8_gemm_nn", a, sfa, transposed(b), transposed(sfb), d, c, options, stream);
}

void fp8_gemm_tn(const TensorView& a, const TensorView& sfa, const TensorView& b, const TensorView& sfb,
                 const TensorView& d, const TensorView* c, const GemmOptions& options, cudaStream_t stream) {
  run_fp8_gemm("fp8_gemm_tn", transposed(a), transposed(sfa), transposed(b), transposed(sfb), d, c, options, stream);
}

void fp8_gemm_tt(const TensorView& a, const TensorView& sfa, const TensorView& b, const TensorView& sfb,
                 const TensorView& d, const TensorView* c, const GemmOptions& options, cudaStream_t stream) {
  run_fp8_gemm("fp8_gemm_tt", transposed(a), transposed(sfa), b, sfb, d, c, options, stream);
}

void set_grouped_config_overrides(const std::map<std::string, int>& overrides) {
  api::apply_config_overrides(heuristics::Fp8GemmChoice{}, overrides, "set_grouped_config_overrides");  // names checked
  thread_grouped_overrides = overrides;
}

void fp8_gemm_nt_with_overrides(const TensorView& a, const TensorView& sfa, const TensorView& b, const TensorView& sfb,
                                const TensorView& d, const TensorView* c, const GemmOptions& options,
                                const std::map<std::string, int>& overrides, cudaStream_t stream) {
  const heuristics::Fp8GemmChoice choice = api::apply_config_overrides(
      api::fp8_gemm_choice(api::fp8_gemm_problem(a, sfa, b, sfb, d, c, options)), overrides, "fp8_gemm_nt_with_overrides");
  api::fp8_gemm_nt_with_config(a, sfa, b, sfb, d, c, options, choice, stream);
}

}  // namespace hopgemm
