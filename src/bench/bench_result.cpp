#include "bench/bench_result.hpp"

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "hopgemm/error.hpp"
#include "hopgemm/runtime.hpp"

namespace hopgemm::bench {
namespace {

// Shortest round-trip decimal of a finite double; "null" otherwise.
std::string json_number(double value) {
  if (!std::isfinite(value)) return "null";
  char buf[32];
  const auto result = std::to_chars(buf, buf + sizeof(buf), value);
  return std::string(buf, result.ptr);
}

std::string json_number(const std::optional<double>& value) { return value ? json_number(*value) : "null"; }

std::string json_string(std::string_view text) { return "\"" + json_escape(text) + "\""; }

// `"key": value` pairs joined into an object on one line.
class InlineObject {
 public:
  InlineObject& add(std::string_view key, const std::string& raw_value) {
    text_ += (text_.empty() ? "" : ", ") + json_string(key) + ": " + raw_value;
    return *this;
  }
  std::string str() const { return "{" + text_ + "}"; }

 private:
  std::string text_;
};

std::string optional_map(const std::map<std::string, std::optional<double>>& values) {
  InlineObject obj;
  for (const auto& [name, value] : values) obj.add(name, json_number(value));
  return obj.str();
}

std::string slug(std::string_view text) {
  std::string out;
  for (char c : text) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (std::isalnum(u)) {
      out += static_cast<char>(std::tolower(u));
    } else if (!out.empty() && out.back() != '-') {
      out += '-';
    }
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "unknown" : out;
}

}  // namespace

void compute_derived(BenchRow& row, double flops, double bytes) {
  const bool have_ours = row.ours_us && std::isfinite(*row.ours_us) && *row.ours_us > 0;
  row.tflops = have_ours ? std::optional<double>(flops / (*row.ours_us * 1e6)) : std::nullopt;
  row.gbps = have_ours ? std::optional<double>(bytes / (*row.ours_us * 1e3)) : std::nullopt;
  row.ratios.clear();
  for (const auto& [name, baseline] : row.baselines_us) {
    const bool ok = have_ours && baseline && std::isfinite(*baseline) && *baseline > 0;
    row.ratios[name] = ok ? std::optional<double>(*baseline / *row.ours_us) : std::nullopt;
  }
}

std::string utc_now_iso8601() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

BenchHeader collect_header(const std::string& commit, const std::string& command_line, const std::string& suite) {
  BenchHeader h;
  h.commit = commit;
  h.command_line = command_line;
  h.suite = suite;
  h.date_utc = utc_now_iso8601();
  h.cuda_toolkit_version = CUDART_VERSION;
#ifdef HOPGEMM_VERSION
  h.hopgemm_version = HOPGEMM_VERSION;
#endif
  h.cublaslt_version = static_cast<int64_t>(cublasLtGetVersion());
  if (cudaRuntimeGetVersion(&h.cuda_runtime_version) != cudaSuccess) h.cuda_runtime_version = 0;
  if (cudaDriverGetVersion(&h.cuda_driver_version) != cudaSuccess) h.cuda_driver_version = 0;
  cudaGetLastError();
  if (gpu_available()) {
    const DeviceInfo& info = device_info();
    h.gpu_name = info.name;
    h.compute_capability = std::to_string(info.arch_major) + "." + std::to_string(info.arch_minor);
    h.sm_count = info.num_sms;
    h.sm_clock_mhz = info.clock_khz / 1000;
    h.memory_clock_mhz = info.memory_clock_khz / 1000;
    h.l2_bytes = info.l2_size;
  }
  return h;
}

std::string json_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 8);
  for (char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out;
}

std::string to_json(const BenchReport& report) {
  const BenchHeader& h = report.header;
  const std::pair<const char*, std::string> header_fields[] = {
      {"gpu", json_string(h.gpu_name)},
      {"compute_capability", json_string(h.compute_capability)},
      {"sm_count", std::to_string(h.sm_count)},
      {"sm_clock_mhz", std::to_string(h.sm_clock_mhz)},
      {"memory_clock_mhz", std::to_string(h.memory_clock_mhz)},
      {"l2_bytes", std::to_string(h.l2_bytes)},
      {"cuda_driver_version", std::to_string(h.cuda_driver_version)},
      {"cuda_runtime_version", std::to_string(h.cuda_runtime_version)},
      {"cuda_toolkit_version", std::to_string(h.cuda_toolkit_version)},
      {"cublaslt_version", std::to_string(h.cublaslt_version)},
      {"hopgemm_version", json_string(h.hopgemm_version)},
      {"commit", json_string(h.commit)},
      {"command_line", json_string(h.command_line)},
      {"date_utc", json_string(h.date_utc)},
      {"suite", json_string(h.suite)},
      {"copy_bandwidth_gbps", json_number(h.copy_bandwidth_gbps)},
  };
  std::string out = "{\n  \"schema\": \"hopgemm-bench/1\",\n  \"header\": {\n";
  bool first = true;
  for (const auto& [key, value] : header_fields) {
    out += std::string(first ? "" : ",\n") + "    " + json_string(key) + ": " + value;
    first = false;
  }
  out += "\n  },\n  \"rows\": [";
  first = true;
  for (const BenchRow& r : report.rows) {
    InlineObject row;
    row.add("op", json_string(r.op))
        .add("m", std::to_string(r.m))
        .add("n", std::to_string(r.n))
        .add("k", std::to_string(r.k))
        .add("groups", std::to_string(r.groups))
        .add("config", json_string(r.config))
        .add("ours_us", json_number(r.ours_us))
        .add("tflops", json_number(r.tflops))
        .add("gbps", json_number(r.gbps))
        .add("baselines_us", optional_map(r.baselines_us))
        .add("ratios", optional_map(r.ratios))
        .add("note", json_string(r.note));
    out += std::string(first ? "\n" : ",\n") + "    " + row.str();
    first = false;
  }
  out += report.rows.empty() ? "]\n}\n" : "\n  ]\n}\n";
  return out;
}

std::string default_result_path(const BenchHeader& header, const std::string& root) {
  std::string gpu = slug(header.gpu_name);
  if (gpu.rfind("nvidia-", 0) == 0) gpu = gpu.substr(7);
  const std::string date = header.date_utc.size() >= 10 ? header.date_utc.substr(0, 10) : "undated";
  const std::string name = gpu + "-" + date + "-" + slug(header.suite) + ".json";
  return (std::filesystem::path(root) / "bench" / "results" / name).string();
}

void write_json(const BenchReport& report, const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  std::error_code ec;
  if (target.has_parent_path()) fs::create_directories(target.parent_path(), ec);
  if (ec) {
    throw Error(ErrorKind::kInvalidArgument,
                "write_json: cannot create the directory of '" + path + "': " + ec.message());
  }
  const fs::path temp = target.string() + ".tmp";
  {
    std::ofstream file(temp, std::ios::binary | std::ios::trunc);
    file << to_json(report);
    file.close();
    if (!file) throw Error(ErrorKind::kInvalidArgument, "write_json: cannot write '" + temp.string() + "'");
  }
  fs::rename(temp, target, ec);
  if (ec) {
    fs::remove(temp, ec);
    throw Error(ErrorKind::kInvalidArgument, "write_json: cannot rename onto '" + path + "'");
  }
}

}  // namespace hopgemm::bench
