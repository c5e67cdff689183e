// hopgemm bench: our FP8 GEMMs against the cuBLASLt baselines, on the same inputs in the same process.
// Inputs are random BF16 matrices quantised by our own kernels (A per 1x128, B per 128x128, or per 1x128
// for weight gradients); every row is also checked against cuBLASLt's blockwise result (calc_diff).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "api/gemm_internal.hpp"
#include "api/gemm_sources.hpp"
#include "api/suites.hpp"
#include "bench/bench_result.hpp"
#include "bench/cublaslt_baselines.hpp"
#include "bench/timer.hpp"
#include "cli.hpp"
#include "gemm_inputs.hpp"
#include "heuristics/sm90_fp8_gemm.hpp"
#include "hopgemm/error.hpp"
#include "hopgemm/gemm.hpp"
#include "hopgemm/quantize.hpp"
#include "hopgemm/runtime.hpp"
#include "runtime/cuda_check.hpp"

namespace hopgemm::cli {
namespace {

using bench::DeviceBuffer;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

float bf16_to_float(uint16_t v) {
  const uint32_t bits = uint32_t{v} << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// DeepGEMM's calc_diff over two BF16 device matrices [m, n] (row-major, contiguous).
double calc_diff_bf16(const void* x, const void* y, int64_t count) {
  std::vector<uint16_t> hx(count), hy(count);
  HOPGEMM_CUDA_CHECK(cudaMemcpy(hx.data(), x, count * 2, cudaMemcpyDeviceToHost));
  HOPGEMM_CUDA_CHECK(cudaMemcpy(hy.data(), y, count * 2, cudaMemcpyDeviceToHost));
  double xy = 0, xx_yy = 0;
  for (int64_t i = 0; i < count; ++i) {
    const double a = bf16_to_float(hx[i]), b = bf16_to_float(hy[i]);
    xy += a * b;
    xx_yy += a * a + b * b;
  }
  return xx_yy == 0 ? 0.0 : 1.0 - 2.0 * xy / xx_yy;
}

double geomean(const std::vector<double>& values) {
  double log_sum = 0;
  for (double v : values) log_sum += std::log(v);
  return values.empty() ? 0.0 : std::exp(log_sum / values.size());
}

std::string fmt_us(const std::optional<double>& us) {
  char text[32];
  if (!us) return "n/a";
  std::snprintf(text, sizeof(text), "%.1f", *us);
  return text;
}

std::string fmt_ratio(const std::optional<double>& r) {
  char text[32];
  if (!r) return "n/a";
  std::snprintf(text, sizeof(text), "%.2fx", *r);
  return text;
}

}  // namespace

int run_bench(Args& args) {
  const std::string suite = args.take("suite", "deepseek-v3");
  const std::string shape = args.take("shape");
  const std::string role = args.take("role");
  std::string out_path = args.take("out");
  const bool plot = args.take_flag("plot");
  const int iters = args.take_int("iters", 30);
  const bool mn_major_sfa = take_sfa_mn_major(args);
  const std::string sfa_layout = mn_major_sfa ? "mn" : "row";
  const std::string flush = args.take("flush", "write");
  // --sustain-ms N: each kernel (ours and each baseline) runs back to back for N ms before its samples, so every
  // figure is taken at the clocks a saturated training loop settles to, not those of a burst.
  const int sustain_ms = args.take_int("sustain-ms", 0, 0, 60000);
  // --config field=value,...: our kernel runs the heuristics' config with these fields changed (as
  // bench/try_configs.py does), so a config field can be timed against the baselines without the Python package.
  const std::string config_text = args.take("config");
  const std::map<std::string, int> overrides = api::parse_config_overrides(config_text, "--config");
  if (flush != "write" && flush != "clean") {
    throw Error(ErrorKind::kInvalidArgument,
                "--flush must be 'write' (write 256 MB before each call, L2 left dirty) or 'clean' (then read it back: "
                "a clean, cold L2), got '" + flush + "'");
  }
  args.expect_consumed();
  const auto shapes = gemm_shapes(suite, shape, role);  // every argument is checked before the GPU is looked for
  if (!gpu_available()) throw Error(ErrorKind::kCuda, "bench needs a GPU; use `hopgemm precompile` on this machine");
  if (device_info().arch_major != 9) throw Error(ErrorKind::kUnsupported, "bench needs an SM90 (Hopper) GPU");

  cudaStream_t stream;
  HOPGEMM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  bench::CublasLtBaselines cublaslt;
  bench::BenchReport report;
  const std::string selection = shape.empty() ? "--suite " + suite + (role.empty() ? "" : " --role " + role) : "--shape " + shape;
  report.header = bench::collect_header(git_commit(), "hopgemm bench " + selection + " --sfa " + sfa_layout + " --flush " + flush +
                                                         (config_text.empty() ? "" : " --config " + config_text) +
                                                         (sustain_ms > 0 ? " --sustain-ms " + std::to_string(sustain_ms) : ""),
                                        (shape.empty() ? suite + (role.empty() ? "" : "-" + role) : "shape-" + shape) +
                                            (flush == "clean" ? "-clean-l2" : "") + (sustain_ms > 0 ? "-sustained" : ""));
  report.header.copy_bandwidth_gbps = bench::copy_bandwidth_gbps();
  bench::TimerOptions timer;
  timer.iters = iters;
  timer.flush_mode = flush == "clean" ? bench::L2Flush::kWriteThenRead : bench::L2Flush::kWrite;
  timer.sustain_ms = sustain_ms;

  // Two unit scales for the per-tensor baseline, each 16-byte aligned (cuBLASLt refuses less).
  DeviceBuffer ones(sizeof(float) * 8);
  const float host_ones[8] = {1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f};
  HOPGEMM_CUDA_CHECK(cudaMemcpy(ones.get(), host_ones, sizeof(host_ones), cudaMemcpyHostToDevice));

  std::printf("%-6s %6s %6s %6s | %9s %7s %7s | %9s %7s | %9s %7s | %9s | %9s | %s\n", "role", "M", "N", "K", "ours us",
              "TFLOPS", "GB/s", "blk us", "speedup", "ptens us", "ratio", "bf16 us", "diff", "config");
  std::vector<double> blockwise_speedups, m4096_pertensor_ratios;
  uint32_t seed = 1;
  for (const auto& s : shapes) {
    const bool wgrad = s.wgrad();
    GemmInputs in(s, mn_major_sfa, seed, stream);
    seed += 2;
    const TensorView &a16v = in.a16v, &b16v = in.b16v, &a8v = in.a8v, &b8v = in.b8v, &sfav = in.sfav,
                     &sfbv = in.sfbv, &dv = in.dv;
    DeviceBuffer d_ref(s.m * s.n * 2), d_tmp(s.m * s.n * 2);
    const TensorView d_refv = make_tensor(d_ref.get(), DType::kBFloat16, {s.m, s.n}, 0);
    const TensorView d_tmpv = make_tensor(d_tmp.get(), DType::kBFloat16, {s.m, s.n}, 0);

    bench::BenchRow row;
    row.op = wgrad ? "fp8_gemm_nt_1d1d_acc" : "fp8_gemm_nt";
    row.m = s.m;
    row.n = s.n;
    row.k = s.k;
    row.note = api::gemm_role_name(s.role);
    GemmOptions options;
    const TensorView* c = wgrad ? &dv : nullptr;
    heuristics::Fp8GemmChoice choice = api::fp8_gemm_choice(api::fp8_gemm_problem(a8v, sfav, b8v, sfbv, dv, c, options));
    if (!overrides.empty()) choice = api::apply_config_overrides(choice, overrides, "--config");
    row.config = heuristics::describe(choice) + (overrides.empty() ? "" : " with --config " + config_text);
    try {
      row.ours_us = bench::time_call(
                        [&](cudaStream_t st) {
                          if (overrides.empty())
                            fp8_gemm_nt(a8v, sfav, b8v, sfbv, dv, c, options, st);
                          else
                            api::fp8_gemm_nt_with_config(a8v, sfav, b8v, sfbv, dv, c, options, choice, st);
                        },
                        stream, timer)
                        .median_us;
    } catch (const Error& e) {
      row.note += std::string(" ours failed: ") + e.what();
    }
    auto time_baseline = [&](const char* name, const std::function<void(cudaStream_t)>& fn) {
      try {
        row.baselines_us[name] = bench::time_call(fn, stream, timer).median_us;
      } catch (const Error& e) {
        row.baselines_us[name] = std::nullopt;
      }
    };
    std::optional<double> diff;
    if (!wgrad) {
      bench::CublasLtBlockScales scales = bench::to_cublaslt_block_scales(sfav, sfbv);
      time_baseline("cublaslt_fp8_blockwise",
                    [&](cudaStream_t st) { cublaslt.fp8_blockwise(a8v, scales.sfa, b8v, scales.sfb, d_refv, st); });
      if (row.ours_us && row.baselines_us["cublaslt_fp8_blockwise"] && s.m * s.n <= (int64_t{1} << 26)) {
        HOPGEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
        diff = calc_diff_bf16(in.d.get(), d_ref.get(), s.m * s.n);
      }
    }
    time_baseline("cublaslt_fp8_per_tensor", [&](cudaStream_t st) {
      cublaslt.fp8_per_tensor(a8v, b8v, d_tmpv, ones.as<float>(), ones.as<float>() + 4, st);
    });
    time_baseline("cublas_bf16", [&](cudaStream_t st) { cublaslt.bf16(a16v, b16v, d_tmpv, st); });
    HOPGEMM_CUDA_CHECK(cudaStreamSynchronize(stream));

    bench::compute_derived(row, in.flops(), in.bytes());
    if (diff) row.note += " diff_vs_cublaslt=" + std::to_string(*diff);
    if (auto r = row.ratios["cublaslt_fp8_blockwise"]) blockwise_speedups.push_back(*r);
    if (s.m == 4096 && s.role == api::GemmRole::kForward) {
      if (auto r = row.ratios["cublaslt_fp8_per_tensor"]) m4096_pertensor_ratios.push_back(*r);
    }
    std::printf("%-6s %6lld %6lld %6lld | %9s %7.0f %7.0f | %9s %7s | %9s %7s | %9s | %9s | %s\n",
                api::gemm_role_name(s.role), (long long)s.m, (long long)s.n, (long long)s.k, fmt_us(row.ours_us).c_str(),
                row.tflops.value_or(0), row.gbps.value_or(0), fmt_us(row.baselines_us["cublaslt_fp8_blockwise"]).c_str(),
                fmt_ratio(row.ratios["cublaslt_fp8_blockwise"]).c_str(),
                fmt_us(row.baselines_us["cublaslt_fp8_per_tensor"]).c_str(),
                fmt_ratio(row.ratios["cublaslt_fp8_per_tensor"]).c_str(), fmt_us(row.baselines_us["cublas_bf16"]).c_str(),
                diff ? std::to_string(*diff).substr(0, 8).c_str() : "-", row.config.c_str());
    std::fflush(stdout);
    report.rows.push_back(std::move(row));
  }
  cudaStreamDestroy(stream);

  std::printf("\ngeomean speed-up over cuBLASLt blockwise: %.3fx over %zu shapes (min %.3fx)\n", geomean(blockwise_speedups),
              blockwise_speedups.size(),
              blockwise_speedups.empty() ? 0.0 : *std::min_element(blockwise_speedups.begin(), blockwise_speedups.end()));
  if (!m4096_pertensor_ratios.empty()) {
    std::printf("M=4096 forward: geomean time ratio per-tensor FP8 / ours: %.3fx\n", geomean(m4096_pertensor_ratios));
  }
  if (out_path.empty()) out_path = bench::default_result_path(report.header, HOPGEMM_SOURCE_DIR);
  bench::write_json(report, out_path);
  std::printf("results: %s\n", out_path.c_str());
  if (plot) {
    const std::string command = "python3 " HOPGEMM_SOURCE_DIR "/bench/plot.py '" + out_path + "'";
    if (std::system(command.c_str()) != 0) std::fprintf(stderr, "warning: plotting failed (%s)\n", command.c_str());
  }
  return 0;
}

}  // namespace hopgemm::cli
