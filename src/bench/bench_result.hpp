#pragma once
// Benchmark results of `hopgemm bench` as JSON: a header describing the machine and the run, one
// row per (op, shape) with our time, TFLOPS, GB/s, each baseline's time and our speed-up over it. The writer is
// hand-written (no dependency); bench/plot.py reads the files.
//
// Layout of the file:
//   {"schema": "hopgemm-bench/1",
//    "header": {"gpu": ..., "sm_count": ..., ..., "date_utc": "2026-11-21T20:01:21Z"},
//    "rows": [{"op": "fp8_gemm_nt", "m": 128, "n": 2112, "k": 7168, "groups": 1, "config": "...",
//              "ours_us": 13.7, "tflops": 283.1, "gbps": 1214.5,
//              "baselines_us": {"cublaslt_fp8_blockwise": 22.8, "cublaslt_bf16": null},
//              "ratios": {"cublaslt_fp8_blockwise": 1.66, "cublaslt_bf16": null}, "note": ""}, ...]}
// Missing or non-finite numbers are written as null ("n/a": a baseline that rejects the shape, an op not run).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hopgemm::bench {

struct BenchHeader {
  std::string gpu_name;            // "NVIDIA H100 80GB HBM3"
  std::string compute_capability;  // "9.0"
  int sm_count = 0;
  int sm_clock_mhz = 0;      // maximum SM clock
  int memory_clock_mhz = 0;  // maximum memory clock
  int64_t l2_bytes = 0;
  int cuda_driver_version = 0;   // cudaDriverGetVersion: the newest CUDA the driver supports, e.g. 13000
  int cuda_runtime_version = 0;  // cudaRuntimeGetVersion of the loaded runtime
  int cuda_toolkit_version = 0;  // CUDART_VERSION the library was built with
  int64_t cublaslt_version = 0;  // cublasLtGetVersion of the loaded library
  std::string hopgemm_version;
  std::string commit;        // passed in by the caller (git describe / hash)
  std::string command_line;  // the command that produced the file
  std::string date_utc;      // ISO 8601, "YYYY-MM-DDTHH:MM:SSZ"
  std::string suite;
  std::optional<double> copy_bandwidth_gbps;  // measured device copy, bytes read + written
};

struct BenchRow {
  std::string op;  // our op name, e.g. "fp8_gemm_nt", "m_grouped_fp8_gemm_nt_masked", "bf16_gemm_nt"
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  int64_t groups = 1;
  std::string config;              // our kernel configuration, human-readable
  std::optional<double> ours_us;   // median microseconds; nullopt: not run / unsupported
  std::optional<double> tflops;    // ours
  std::optional<double> gbps;      // ours
  std::map<std::string, std::optional<double>> baselines_us;  // name -> median us, nullopt: "n/a"
  std::map<std::string, std::optional<double>> ratios;        // name -> baseline_us / ours_us (> 1: ours faster)
  std::string note;
};

struct BenchReport {
  BenchHeader header;
  std::vector<BenchRow> rows;
};

// Sets row.tflops = flops / ours_us, row.gbps = bytes / ours_us and row.ratios[name] = baseline_us / ours_us for
// every baseline (nullopt where either time is missing). FLOPs: 2*M*N*K over valid rows; bytes: each input read
// once plus each output written once (the caller knows the op and computes both).
void compute_derived(BenchRow& row, double flops, double bytes);

// Device, driver, runtime and library versions of the current device (GPU fields stay empty/zero where no GPU
// is present), the UTC date now, and the caller's commit, command line and suite.
BenchHeader collect_header(const std::string& commit, const std::string& command_line, const std::string& suite);

// The current UTC time as "YYYY-MM-DDTHH:MM:SSZ".
std::string utc_now_iso8601();

// `text` as a JSON string literal body: quotes, backslashes and control characters escaped (\n, \t, ...,
// \u00XX); other bytes (UTF-8) kept as they are.
std::string json_escape(std::string_view text);

// The whole report as JSON text (2-space indented header, one line per row).
std::string to_json(const BenchReport& report);

// "bench/results/<gpu>-<YYYY-MM-DD>-<suite>.json" under `root`, with the GPU name and suite reduced to lower-case
// letters, digits and '-' ("NVIDIA H100 80GB HBM3" -> "h100-80gb-hbm3").
std::string default_result_path(const BenchHeader& header, const std::string& root = ".");

// Writes to_json(report) to `path` (parent directories created; written to a temporary file, then renamed).
// Throws Error(kInvalidArgument) naming the path when it cannot be written.
void write_json(const BenchReport& report, const std::string& path);

}  // namespace hopgemm::bench
