// hopgemm tune: measure the cost model's best candidates for each shape on this GPU and write the winners
// as a tuning table (src/heuristics/sm90_fp8_gemm_tuned.inc) that overrides the model for exactly those
// problems. Candidates are compiled in parallel first, then timed like `hopgemm bench` (L2 flushed, median).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "api/gemm_internal.hpp"
#include "api/gemm_sources.hpp"
#include "bench/bench_result.hpp"
#include "bench/confirm.hpp"
#include "bench/timer.hpp"
#include "cli.hpp"
#include "gemm_inputs.hpp"
#include "hopgemm/error.hpp"
#include "hopgemm/runtime.hpp"
#include "jit/precompile.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/pod_key.hpp"

namespace hopgemm::cli {
namespace {

// The same tile with the other consumer schedule (promotion overlap toggled), where valid.
std::vector<heuristics::Fp8GemmChoice> schedule_variants(const heuristics::Fp8GemmChoice& c) {
  heuristics::Fp8GemmChoice v = c;
  v.config.promote_overlap = 1 - c.config.promote_overlap;
  if (!device::is_valid(v.config)) return {};
  return {v};
}

// Raster bands the winner is re-timed with under --bands (16: the default every candidate carries).
constexpr int kRasterBands[] = {16, 1, 2, 4, 8, 32};

}  // namespace

int run_tune(Args& args) {
  const std::string suite = args.take("suite", "deepseek-v3");
  const std::string shape = args.take("shape");
  const std::string role = args.take("role");
  const std::string out_path = args.take("out");
  // --top 0: the op's own choice (tuning-table entry or model pick) is the only candidate; with --bands that re-times
  // the current pick's raster band without re-deciding its tile.
  const int top = args.take_int("top", 8, 0, 100000);
  const int iters = args.take_int("iters", 20);
  const bool mn_major_sfa = take_sfa_mn_major(args);
  // --schedules: also time each candidate with the promotion overlap toggled, where valid; printed for study (the
  // rows written are candidates as the heuristics' schedule rules build them).
  const bool schedules = args.take_flag("schedules");
  // --sustain-ms N: every timing (first pass and confirmation rounds) runs its candidate back to back for N ms
  // first, so candidates are compared at the settled clocks of a saturated GPU (bench --sustain-ms).
  const int sustain_ms = args.take_int("sustain-ms", 0, 0, 60000);
  // --bands: the winner is timed again with other raster bands (the order tiles are visited in) in alternating
  // rounds, and the fastest band is written. The model does not rank bands: a band of 1-4 measured 1-5% faster
  // than 16 on 10 of 25 suite rows, up to 57% slower on others.
  const bool bands = args.take_flag("bands");
  args.expect_consumed();
  const auto shapes = gemm_shapes(suite, shape, role);  // a bad --shape or --suite is reported before the GPU check
  if (!gpu_available() || device_info().arch_major != 9) {
    throw Error(ErrorKind::kUnsupported, "tune needs an SM90 (Hopper) GPU");
  }
  cudaStream_t stream;
  HOPGEMM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  bench::TimerOptions timer;
  timer.iters = iters;
  timer.sustain_ms = sustain_ms;
  const GemmOptions options;

  struct Plan {
    GemmShape shape;
    heuristics::Fp8GemmProblem problem;
    std::vector<heuristics::Fp8GemmChoice> candidates;
    std::optional<size_t> incumbent;  // the problem's tuning-table row among the candidates
  };
  std::vector<Plan> plans;
  std::vector<jit::KernelSource> sources;
  for (const auto& s : shapes) {
    // The problem as the op sees it: the layouts the inputs below will have (GemmInputs hands 1D1D's per-row
    // sfb in the same layout as sfa).
    const int k_major = mn_major_sfa ? 0 : 1;
    const heuristics::Fp8GemmProblem p =
        api::suite_gemm_problem({s.role, s.m, s.n, s.k}, get_num_sms(), k_major, k_major, get_tc_util());
    Plan plan{s, p, top > 0 ? heuristics::rank_fp8_gemm_configs(p, top)
                            : std::vector<heuristics::Fp8GemmChoice>{heuristics::choose_fp8_gemm_config(p)}};
    // A problem the tuning table lists keeps its row unless a candidate beats it by the confirmation's margin in the
    // same rounds (the row is timed as a candidate, as stored), so re-tuning cannot flip a row on noise.
    if (const auto tuned = heuristics::tuned_fp8_gemm_choice(p); tuned && top > 0) {
      auto& cands = plan.candidates;
      using ConfigKey = runtime::PodKey<device::Sm90Fp8GemmConfig>;
      auto it = std::find_if(cands.begin(), cands.end(), [&](const heuristics::Fp8GemmChoice& x) {
        return ConfigKey{x.config} == ConfigKey{tuned->config};
      });
      if (it == cands.end()) it = cands.insert(cands.end(), *tuned);
      *it = *tuned;
      plan.incumbent = static_cast<size_t>(it - cands.begin());
    }
    for (const auto& c : plan.candidates) {
      sources.push_back(api::render_sm90_fp8_gemm(c.config));
      if (schedules)
        for (const auto& v : schedule_variants(c)) sources.push_back(api::render_sm90_fp8_gemm(v.config));
    }
    plans.push_back(std::move(plan));
  }
  std::fprintf(stderr, "compiling %zu candidate kernels\n", sources.size());
  const auto compiled = jit::precompile_sources(sources, 0);
  for (const auto& e : compiled.errors) std::fprintf(stderr, "error: %s\n", e.c_str());

  std::string table = "// hopgemm tune --suite " + suite + (shape.empty() ? "" : " --shape " + shape) +
                      (role.empty() ? "" : " --role " + role) + " --top " +
                      std::to_string(top) + " --sfa " + (mn_major_sfa ? "mn" : "row") + (bands ? " --bands" : "") +
                      (sustain_ms > 0 ? " --sustain-ms " + std::to_string(sustain_ms) : "") + " on " + device_info().name +
                      ", " + bench::utc_now_iso8601() + ", commit " + git_commit() + "\n";
  uint32_t seed = 100;
  for (const Plan& plan : plans) {
    // Each shape's candidate lines follow this header (bench/fit_heuristics.py groups them by it).
    std::fprintf(stderr, "shape %s:%lldx%lldx%lld: %zu candidates\n", api::gemm_role_name(plan.shape.role),
                 (long long)plan.shape.m, (long long)plan.shape.n, (long long)plan.shape.k, plan.candidates.size());
    GemmInputs in(plan.shape, mn_major_sfa, seed, stream);
    seed += 2;
    const TensorView* c = plan.shape.wgrad() ? &in.dv : nullptr;
    // Median time of one configuration on these inputs; a configuration the op refuses times as "infinite".
    auto time_config = [&](const heuristics::Fp8GemmChoice& config, const char* indent) {
      try {
        return bench::time_call([&](cudaStream_t st) {
                 api::fp8_gemm_nt_with_config(in.a8v, in.sfav, in.b8v, in.sfbv, in.dv, c, options, config, st);
               }, stream, timer).median_us;
      } catch (const Error& e) {
        std::fprintf(stderr, "%sskipped: %s\n", indent, e.what());
        return 1e30;
      }
    };
    std::vector<double> first_pass(plan.candidates.size());
    for (size_t i = 0; i < plan.candidates.size(); ++i) {
      const auto& candidate = plan.candidates[i];
      first_pass[i] = time_config(candidate, "  ");
      std::fprintf(stderr, "  %8.1f us  %s\n", first_pass[i], heuristics::describe(candidate).c_str());
      if (schedules) {
        for (const auto& v : schedule_variants(candidate)) {
          std::fprintf(stderr, "    %8.1f us  same tile, promote_overlap=%d\n", time_config(v, "    "),
                       v.config.promote_overlap);
        }
      }
    }
    // The candidates close to the fastest are timed again in rounds (bench/confirm.hpp: the GPU's speed drifts).
    bench::ConfirmOptions keep_row_unless_beaten;
    keep_row_unless_beaten.incumbent = plan.incumbent;
    const bench::Confirmed confirmed = bench::confirm_fastest(
        first_pass, [&](size_t i) { return time_config(plan.candidates[i], "  "); }, keep_row_unless_beaten,
        [&](size_t i, double score, double us, const std::vector<double>& times) {
          std::string all;
          for (double t : times) {
            char buf[32];
            std::snprintf(buf, sizeof(buf), all.empty() ? "%.1f" : " %.1f", t);
            all += buf;
          }
          std::fprintf(stderr, "  confirm %.3fx of the round's fastest, %8.1f us (passes %s)  %s\n", score, us,
                       all.c_str(), heuristics::describe(plan.candidates[i]).c_str());
        });
    if (confirmed.us >= 1e30) continue;
    const heuristics::Fp8GemmChoice* best = &plan.candidates[confirmed.index];
    double best_us = confirmed.us;
    const double model_us = first_pass[0];
    heuristics::Fp8GemmChoice winner = *best;
    if (bands) {
      // Every band of the winning tile timed once, then the close ones in rounds as above (only the winner's band
      // variants are timed, so they compile on first use, in the untimed warm-up calls, not with the candidates).
      std::vector<heuristics::Fp8GemmChoice> variants;
      std::vector<double> band_pass;
      for (int band : kRasterBands) {
        heuristics::Fp8GemmChoice v = winner;
        v.launch.raster_band = band;
        variants.push_back(v);
        band_pass.push_back(time_config(v, "  "));
        std::fprintf(stderr, "  band %2d: %8.1f us\n", band, band_pass.back());
      }
      // The winner's own band is the incumbent: another band replaces it only when faster by 2.5% in the rounds.
      bench::ConfirmOptions keep_unless_faster;
      for (size_t i = 0; i < variants.size(); ++i) {
        if (variants[i].launch.raster_band == winner.launch.raster_band) keep_unless_faster.incumbent = i;
      }
      const bench::Confirmed band_best = bench::confirm_fastest(
          band_pass, [&](size_t i) { return time_config(variants[i], "  "); }, keep_unless_faster,
          [&](size_t i, double score, double us, const std::vector<double>&) {
            std::fprintf(stderr, "  confirm band %2d: %.3fx of the round's fastest, %8.1f us\n", variants[i].launch.raster_band,
                         score, us);
          });
      if (band_best.us < 1e30) {
        winner = variants[band_best.index];
        best_us = band_best.us;
      }
    }
    // The model pick against the winner on their first passes (both from the same sweep; the confirmation
    // rounds run later, on a warmer GPU).
    const double best_first_us = first_pass[confirmed.index];
    const device::Sm90Fp8GemmConfig& b = winner.config;
    std::printf("%-5s %6lld %6lld %6lld  model pick %8.1f us  best %8.1f us (%5.1f TFLOPS; model pick %.2fx of it "
                "in the first pass)  %dx%d s%d c%dx%d k%d\n",
                api::gemm_role_name(plan.shape.role), (long long)plan.shape.m, (long long)plan.shape.n,
                (long long)plan.shape.k, model_us, best_us, in.flops() / best_us * 1e-6, model_us / best_first_us,
                b.block_m, b.block_n, b.num_stages, b.cluster_m, b.cluster_n, b.k_splits);
    std::fflush(stdout);
    char time[32];
    std::snprintf(time, sizeof(time), "  // %.1f us\n", best_us);
    table += "    " + heuristics::tuned_fp8_gemm_row(plan.problem, winner) + time;
  }
  cudaStreamDestroy(stream);
  if (!out_path.empty()) {
    std::ofstream(out_path, std::ios::app) << table;
    std::printf("appended %s\n", out_path.c_str());
  }
  return 0;
}

}  // namespace hopgemm::cli
