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
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "api/suites.hpp"
#include "bench/bench_result.hpp"
#include "bench/cublaslt_baselines.hpp"
#include "bench/timer.hpp"
#include "cli.hpp"
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

// Random BF16 values (approximately normal) generated on the host, uploaded once.
DeviceBuffer random_bf16(int64_t rows, int64_t cols, uint32_t seed) {
  std::vector<uint16_t> host(static_cast<size_t>(rows * cols));
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (auto& v : host) {
    const float f = normal(rng);
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    v = static_cast<uint16_t>((bits + 0x7fff + ((bits >> 16) & 1)) >> 16);
  }
  DeviceBuffer buffer(host.size() * 2);
  HOPGEMM_CUDA_CHECK(cudaMemcpy(buffer.get(), host.data(), host.size() * 2, cudaMemcpyHostToDevice));
  return buffer;
}

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

struct Shape {
  api::GemmRole role;
  int64_t m, n, k;
};

std::vector<Shape> shapes_from(const std::string& suite, const std::string& shape) {
  std::vector<Shape> out;
  if (!shape.empty()) {
    long long m = 0, n = 0, k = 0;
    char tail = 0;
    if (std::sscanf(shape.c_str(), "%lldx%lldx%lld%c", &m, &n, &k, &tail) != 3 || m <= 0 || n <= 0 || k <= 0) {
      throw Error(ErrorKind::kInvalidArgument, "--shape '" + shape + "' must be MxNxK with positive integers");
    }
    out.push_back({api::GemmRole::kForward, m, n, k});
    return out;
  }
  for (const auto& g : api::suite_gemms(suite)) out.push_back({g.role, g.m, g.n, g.k});
  return out;
}

std::string git_commit() {
  if (const char* env = std::getenv("HOPGEMM_COMMIT")) return env;
  std::string out;
  if (FILE* pipe = popen("git rev-parse --short HEAD 2>/dev/null", "r")) {
    char buffer[64];
    while (std::fgets(buffer, sizeof(buffer), pipe)) out += buffer;
    pclose(pipe);
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out.empty() ? "unknown" : out;
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
  std::string out_path = args.take("out");
  const bool plot = args.take_flag("plot");
  const int iters = args.take_int("iters", 30);
  args.expect_consumed();
  if (!gpu_available()) throw Error(ErrorKind::kCuda, "bench needs a GPU; use `hopgemm precompile` on this machine");
  if (device_info().arch_major != 9) throw Error(ErrorKind::kUnsupported, "bench needs an SM90 (Hopper) GPU");

  const auto shapes = shapes_from(suite, shape);
  cudaStream_t stream;
  HOPGEMM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  bench::CublasLtBaselines cublaslt;
  bench::BenchReport report;
  report.header = bench::collect_header(git_commit(), "hopgemm bench " + (shape.empty() ? "--suite " + suite : "--shape " + shape),
                                        shape.empty() ? suite : "shape-" + shape);
  report.header.copy_bandwidth_gbps = bench::copy_bandwidth_gbps();
  bench::TimerOptions timer;
  timer.iters = iters;

  // Two unit scales for the per-tensor baseline, each 16-byte aligned (cuBLASLt refuses less).
  DeviceBuffer ones(sizeof(float) * 8);
  const float host_ones[8] = {1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f};
  HOPGEMM_CUDA_CHECK(cudaMemcpy(ones.get(), host_ones, sizeof(host_ones), cudaMemcpyHostToDevice));

  std::printf("%-6s %6s %6s %6s | %9s %7s %7s | %9s %7s | %9s %7s | %9s | %9s | %s\n", "role", "M", "N", "K", "ours us",
              "TFLOPS", "GB/s", "blk us", "speedup", "ptens us", "ratio", "bf16 us", "diff", "config");
  std::vector<double> blockwise_speedups, m4096_pertensor_ratios;
  uint32_t seed = 1;
  for (const auto& s : shapes) {
    const bool wgrad = s.role == api::GemmRole::kWgrad;
    const int64_t sk = ceil_div(s.k, 128);
    DeviceBuffer a16 = random_bf16(s.m, s.k, seed++), b16 = random_bf16(s.n, s.k, seed++);
    DeviceBuffer a8(s.m * s.k), b8(s.n * s.k), sfa(s.m * sk * 4), sfb((wgrad ? s.n : ceil_div(s.n, 128)) * sk * 4);
    const DType out_dtype = wgrad ? DType::kFloat32 : DType::kBFloat16;
    DeviceBuffer d(s.m * s.n * dtype_size(out_dtype)), d_ref(s.m * s.n * 2), d_tmp(s.m * s.n * 2);
    const TensorView a16v = make_tensor(a16.get(), DType::kBFloat16, {s.m, s.k}, 0);
    const TensorView b16v = make_tensor(b16.get(), DType::kBFloat16, {s.n, s.k}, 0);
    const TensorView a8v = make_tensor(a8.get(), DType::kFloat8E4M3, {s.m, s.k}, 0);
    const TensorView b8v = make_tensor(b8.get(), DType::kFloat8E4M3, {s.n, s.k}, 0);
    const TensorView sfav = make_tensor(sfa.get(), DType::kFloat32, {s.m, sk}, 0);
    const TensorView sfbv = make_tensor(sfb.get(), DType::kFloat32, {wgrad ? s.n : ceil_div(s.n, 128), sk}, 0);
    const TensorView dv = make_tensor(d.get(), out_dtype, {s.m, s.n}, 0);
    const TensorView d_refv = make_tensor(d_ref.get(), DType::kBFloat16, {s.m, s.n}, 0);
    const TensorView d_tmpv = make_tensor(d_tmp.get(), DType::kBFloat16, {s.m, s.n}, 0);
    per_token_cast_to_fp8(a16v, a8v, sfav, false, 128, stream);
    if (wgrad) {
      per_token_cast_to_fp8(b16v, b8v, sfbv, false, 128, stream);
    } else {
      per_block_cast_to_fp8(b16v, b8v, sfbv, false, 128, stream);
    }
    HOPGEMM_CUDA_CHECK(cudaMemsetAsync(d.get(), 0, d.bytes(), stream));

    bench::BenchRow row;
    row.op = wgrad ? "fp8_gemm_nt_1d1d_acc" : "fp8_gemm_nt";
    row.m = s.m;
    row.n = s.n;
    row.k = s.k;
    row.note = api::gemm_role_name(s.role);
    GemmOptions options;
    heuristics::Fp8GemmProblem problem;
    problem.m = s.m;
    problem.n = s.n;
    problem.k = s.k;
    problem.num_sms = get_num_sms();
    if (wgrad) {
      problem.recipe = device::kRecipe1D1D;
      problem.out_dtype = device::kOutFp32;
      problem.accumulate = 1;
    }
    row.config = heuristics::describe(heuristics::choose_fp8_gemm_config(problem));
    try {
      row.ours_us = bench::time_call(
                        [&](cudaStream_t st) { fp8_gemm_nt(a8v, sfav, b8v, sfbv, dv, wgrad ? &dv : nullptr, options, st); },
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
        diff = calc_diff_bf16(d.get(), d_ref.get(), s.m * s.n);
      }
    }
    time_baseline("cublaslt_fp8_per_tensor", [&](cudaStream_t st) {
      cublaslt.fp8_per_tensor(a8v, b8v, d_tmpv, ones.as<float>(), ones.as<float>() + 4, st);
    });
    time_baseline("cublas_bf16", [&](cudaStream_t st) { cublaslt.bf16(a16v, b16v, d_tmpv, st); });
    HOPGEMM_CUDA_CHECK(cudaStreamSynchronize(stream));

    const double flops = 2.0 * s.m * s.n * s.k;
    const double bytes = double(s.m) * s.k + double(s.n) * s.k + double(s.m) * s.n * dtype_size(out_dtype) * (wgrad ? 2 : 1) +
                         double(sfa.bytes() + sfb.bytes());
    bench::compute_derived(row, flops, bytes);
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
