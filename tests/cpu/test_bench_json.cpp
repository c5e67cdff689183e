// The benchmark result writer (src/bench/bench_result.*) and the timer's pure helpers: the JSON is parsed back by
// a small strict parser here, so escaping, nulls and structure are checked, not just substrings.
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <unistd.h>
#include <utility>
#include <vector>

#include "bench/bench_result.hpp"
#include "bench/timer.hpp"
#include "hopgemm/error.hpp"

namespace hopgemm::bench {
namespace {

// A strict JSON value and parser (RFC 8259 grammar; \u escapes limited to the BMP, which is all the writer emits).
struct Json {
  enum class Type { kNull, kBool, kNumber, kString, kArray, kObject } type = Type::kNull;
  bool boolean = false;
  double number = 0;
  std::string string;
  std::vector<Json> array;
  std::vector<std::pair<std::string, Json>> object;

  const Json& operator[](const std::string& key) const {
    for (const auto& [k, v] : object) {
      if (k == key) return v;
    }
    throw std::runtime_error("no key " + key);
  }
  bool has(const std::string& key) const {
    for (const auto& kv : object) {
      if (kv.first == key) return true;
    }
    return false;
  }
};

class Parser {
 public:
  explicit Parser(const std::string& text) : s_(text) {}
  Json parse_document() {
    Json v = value();
    ws();
    if (i_ != s_.size()) fail("trailing characters");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what) {
    throw std::runtime_error("JSON parse error at " + std::to_string(i_) + ": " + what);
  }
  void ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\r' || s_[i_] == '\t')) ++i_;
  }
  bool eat(char c) {
    ws();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!eat(c)) fail(std::string("expected '") + c + "'");
  }
  bool literal(const char* word) {
    const std::string w(word);
    if (s_.compare(i_, w.size(), w) == 0) {
      i_ += w.size();
      return true;
    }
    return false;
  }
  std::string str() {
    expect('"');
    std::string out;
    while (true) {
      if (i_ >= s_.size()) fail("unterminated string");
      const char c = s_[i_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) fail("raw control character in string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (i_ >= s_.size()) fail("dangling escape");
      const char e = s_[i_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          if (i_ + 4 > s_.size()) fail("short \\u escape");
          const unsigned code = static_cast<unsigned>(std::stoul(s_.substr(i_, 4), nullptr, 16));
          i_ += 4;
          if (code >= 0x80) fail("test parser handles ASCII \\u escapes only");
          out += static_cast<char>(code);
          break;
        }
        default: fail("bad escape");
      }
    }
  }
  Json value() {
    ws();
    if (i_ >= s_.size()) fail("unexpected end");
    Json v;
    const char c = s_[i_];
    if (c == '{') {
      ++i_;
      v.type = Json::Type::kObject;
      if (eat('}')) return v;
      do {
        ws();
        std::string key = str();
        expect(':');
        v.object.emplace_back(std::move(key), value());
      } while (eat(','));
      expect('}');
    } else if (c == '[') {
      ++i_;
      v.type = Json::Type::kArray;
      if (eat(']')) return v;
      do v.array.push_back(value());
      while (eat(','));
      expect(']');
    } else if (c == '"') {
      v.type = Json::Type::kString;
      v.string = str();
    } else if (literal("null")) {
      v.type = Json::Type::kNull;
    } else if (literal("true")) {
      v.type = Json::Type::kBool;
      v.boolean = true;
    } else if (literal("false")) {
      v.type = Json::Type::kBool;
    } else {
      const size_t start = i_;
      if (s_[i_] == '-') ++i_;
      if (i_ >= s_.size() || !std::isdigit(static_cast<unsigned char>(s_[i_]))) fail("bad value");
      if (s_[i_] == '0' && i_ + 1 < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_ + 1]))) {
        fail("leading zero");
      }
      while (i_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[i_])) || s_[i_] == '.' ||
                                s_[i_] == 'e' || s_[i_] == 'E' || s_[i_] == '+' || s_[i_] == '-')) {
        ++i_;
      }
      v.type = Json::Type::kNumber;
      v.number = std::strtod(s_.substr(start, i_ - start).c_str(), nullptr);
    }
    return v;
  }

  const std::string& s_;
  size_t i_ = 0;
};

Json parse(const std::string& text) { return Parser(text).parse_document(); }

BenchReport sample_report() {
  BenchReport report;
  BenchHeader& h = report.header;
  h.gpu_name = "NVIDIA H100 80GB HBM3";
  h.compute_capability = "9.0";
  h.sm_count = 132;
  h.sm_clock_mhz = 1980;
  h.memory_clock_mhz = 2619;
  h.l2_bytes = 52428800;
  h.cuda_driver_version = 13000;
  h.cuda_runtime_version = 13000;
  h.cuda_toolkit_version = 13000;
  h.cublaslt_version = 130100;
  h.commit = "abc1234-dirty";
  h.command_line = "hopgemm bench --suite \"deepseek-v3\"\t--out C:\\tmp\\x.json\n";
  h.date_utc = "2026-11-21T20:01:21Z";
  h.suite = "deepseek-v3";
  h.copy_bandwidth_gbps = 3012.5;

  BenchRow fast;
  fast.op = "fp8_gemm_nt";
  fast.m = 128;
  fast.n = 2112;
  fast.k = 7168;
  fast.config = "block_m=64 block_n=128 \"swap\" stages=8";
  fast.ours_us = 13.7;
  fast.baselines_us["cublaslt_fp8_blockwise"] = 22.8;
  fast.baselines_us["cublaslt_fp8_per_tensor"] = 11.5;
  fast.baselines_us["cublaslt_bf16"] = 20.5;
  compute_derived(fast, 2.0 * 128 * 2112 * 7168, 128.0 * 7168 + 2112.0 * 7168 + 2.0 * 128 * 2112);
  report.rows.push_back(fast);

  BenchRow decode;
  decode.op = "fp8_gemm_nt";
  decode.m = 1;
  decode.n = 576;
  decode.k = 7168;
  decode.ours_us = 11.6;
  decode.baselines_us["cublaslt_fp8_blockwise"] = std::nullopt;  // cuBLASLt rejects M = 1
  decode.baselines_us["cublaslt_bf16"] = std::numeric_limits<double>::quiet_NaN();
  compute_derived(decode, 2.0 * 576 * 7168, 7168.0 + 576.0 * 7168 + 2.0 * 576);
  decode.note = "ctrl \x01 and utf-8 \xc2\xb5s";
  report.rows.push_back(decode);

  BenchRow not_run;
  not_run.op = "m_grouped_fp8_gemm_nt_masked";
  not_run.m = 4096;
  not_run.n = 7168;
  not_run.k = 2048;
  not_run.groups = 32;
  not_run.baselines_us["cublaslt_fp8_blockwise"] = 100.0;
  compute_derived(not_run, 1.0, 1.0);
  report.rows.push_back(not_run);
  return report;
}

TEST(BenchJson, EscapesQuotesBackslashesAndControlCharacters) {
  EXPECT_EQ(json_escape("plain"), "plain");
  EXPECT_EQ(json_escape("a\"b"), "a\\\"b");
  EXPECT_EQ(json_escape("C:\\x"), "C:\\\\x");
  EXPECT_EQ(json_escape("l1\nl2\r\t\b\f"), "l1\\nl2\\r\\t\\b\\f");
  EXPECT_EQ(json_escape(std::string("\x01\x1f\x7f", 3)), "\\u0001\\u001f\\u007f");
  EXPECT_EQ(json_escape(std::string("nul\0x", 5)), "nul\\u0000x");
  EXPECT_EQ(json_escape("\xc2\xb5s"), "\xc2\xb5s");  // UTF-8 passes through
}

TEST(BenchJson, ComputesTflopsGbpsAndRatios) {
  const BenchReport report = sample_report();
  const BenchRow& fast = report.rows[0];
  ASSERT_TRUE(fast.tflops && fast.gbps);
  EXPECT_NEAR(*fast.tflops, 2.0 * 128 * 2112 * 7168 / 13.7e-6 / 1e12, 1e-9);
  EXPECT_NEAR(*fast.gbps, (128.0 * 7168 + 2112.0 * 7168 + 2.0 * 128 * 2112) / 13.7e-6 / 1e9, 1e-9);
  EXPECT_NEAR(*fast.ratios.at("cublaslt_fp8_blockwise"), 22.8 / 13.7, 1e-12);
  EXPECT_NEAR(*fast.ratios.at("cublaslt_fp8_per_tensor"), 11.5 / 13.7, 1e-12);

  const BenchRow& decode = report.rows[1];
  EXPECT_FALSE(decode.ratios.at("cublaslt_fp8_blockwise").has_value());
  EXPECT_FALSE(decode.ratios.at("cublaslt_bf16").has_value());  // NaN baseline: no ratio

  const BenchRow& not_run = report.rows[2];
  EXPECT_FALSE(not_run.tflops.has_value());
  EXPECT_FALSE(not_run.gbps.has_value());
  EXPECT_FALSE(not_run.ratios.at("cublaslt_fp8_blockwise").has_value());
}

TEST(BenchJson, DocumentParsesBackWithEveryField) {
  const BenchReport report = sample_report();
  const std::string text = to_json(report);
  Json doc;
  ASSERT_NO_THROW(doc = parse(text)) << text;
  EXPECT_EQ(doc["schema"].string, "hopgemm-bench/1");

  const Json& h = doc["header"];
  EXPECT_EQ(h["gpu"].string, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(h["compute_capability"].string, "9.0");
  EXPECT_EQ(h["sm_count"].number, 132);
  EXPECT_EQ(h["sm_clock_mhz"].number, 1980);
  EXPECT_EQ(h["memory_clock_mhz"].number, 2619);
  EXPECT_EQ(h["l2_bytes"].number, 52428800);
  EXPECT_EQ(h["cuda_driver_version"].number, 13000);
  EXPECT_EQ(h["cuda_runtime_version"].number, 13000);
  EXPECT_EQ(h["cuda_toolkit_version"].number, 13000);
  EXPECT_EQ(h["cublaslt_version"].number, 130100);
  EXPECT_EQ(h["commit"].string, "abc1234-dirty");
  EXPECT_EQ(h["command_line"].string, report.header.command_line);  // quotes, tab, backslash, newline survive
  EXPECT_EQ(h["date_utc"].string, "2026-11-21T20:01:21Z");
  EXPECT_EQ(h["suite"].string, "deepseek-v3");
  EXPECT_EQ(h["copy_bandwidth_gbps"].number, 3012.5);
  EXPECT_TRUE(h.has("hopgemm_version"));

  const Json& rows = doc["rows"];
  ASSERT_EQ(rows.type, Json::Type::kArray);
  ASSERT_EQ(rows.array.size(), 3u);
  const Json& r0 = rows.array[0];
  EXPECT_EQ(r0["op"].string, "fp8_gemm_nt");
  EXPECT_EQ(r0["m"].number, 128);
  EXPECT_EQ(r0["n"].number, 2112);
  EXPECT_EQ(r0["k"].number, 7168);
  EXPECT_EQ(r0["groups"].number, 1);
  EXPECT_EQ(r0["config"].string, report.rows[0].config);
  EXPECT_EQ(r0["ours_us"].number, 13.7);  // shortest round-trip formatting is exact
  EXPECT_EQ(r0["tflops"].number, *report.rows[0].tflops);
  EXPECT_EQ(r0["gbps"].number, *report.rows[0].gbps);
  EXPECT_EQ(r0["baselines_us"]["cublaslt_fp8_blockwise"].number, 22.8);
  EXPECT_EQ(r0["ratios"]["cublaslt_bf16"].number, 20.5 / 13.7);

  const Json& r1 = rows.array[1];
  EXPECT_EQ(r1["baselines_us"]["cublaslt_fp8_blockwise"].type, Json::Type::kNull);
  EXPECT_EQ(r1["baselines_us"]["cublaslt_bf16"].type, Json::Type::kNull);  // NaN is written as null
  EXPECT_EQ(r1["ratios"]["cublaslt_fp8_blockwise"].type, Json::Type::kNull);
  EXPECT_EQ(r1["note"].string, report.rows[1].note);

  const Json& r2 = rows.array[2];
  EXPECT_EQ(r2["groups"].number, 32);
  EXPECT_EQ(r2["ours_us"].type, Json::Type::kNull);
  EXPECT_EQ(r2["tflops"].type, Json::Type::kNull);
  EXPECT_EQ(r2["config"].string, "");
}

TEST(BenchJson, EmptyReportIsValid) {
  BenchReport report;
  const Json doc = parse(to_json(report));
  EXPECT_EQ(doc["rows"].type, Json::Type::kArray);
  EXPECT_TRUE(doc["rows"].array.empty());
  EXPECT_EQ(doc["header"]["copy_bandwidth_gbps"].type, Json::Type::kNull);
}

TEST(BenchJson, DefaultPathIsGpuDateSuite) {
  BenchHeader h;
  h.gpu_name = "NVIDIA H100 80GB HBM3";
  h.date_utc = "2026-11-21T20:01:21Z";
  h.suite = "deepseek-v3";
  EXPECT_EQ(default_result_path(h, "/repo"), "/repo/bench/results/h100-80gb-hbm3-2026-11-21-deepseek-v3.json");
  h.gpu_name = "";
  h.suite = "My Suite/1";
  EXPECT_EQ(default_result_path(h, "r"), "r/bench/results/unknown-2026-11-21-my-suite-1.json");
}

TEST(BenchJson, HeaderHasDateAndCallerFieldsWithoutGpu) {
  const BenchHeader h = collect_header("deadbeef", "hopgemm bench", "deepseek-v3");
  EXPECT_EQ(h.commit, "deadbeef");
  EXPECT_EQ(h.command_line, "hopgemm bench");
  EXPECT_EQ(h.suite, "deepseek-v3");
  ASSERT_EQ(h.date_utc.size(), 20u);
  EXPECT_EQ(h.date_utc[4], '-');
  EXPECT_EQ(h.date_utc[10], 'T');
  EXPECT_EQ(h.date_utc.back(), 'Z');
  EXPECT_GT(h.cuda_toolkit_version, 12000);
  EXPECT_GT(h.cublaslt_version, 0);
}

TEST(BenchJson, WritesFileAndReportsUnwritablePaths) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("hopgemm_bench_json_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const BenchReport report = sample_report();
  const fs::path path = dir / "nested" / "out.json";
  write_json(report, path.string());
  std::ifstream in(path);
  std::stringstream content;
  content << in.rdbuf();
  EXPECT_EQ(content.str(), to_json(report));
  EXPECT_FALSE(fs::exists(path.string() + ".tmp"));

  // A regular file where a directory is needed.
  const fs::path blocked = dir / "nested" / "out.json" / "child.json";
  try {
    write_json(report, blocked.string());
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find(blocked.string()), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}

TEST(BenchTimer, MedianOfOddEvenAndEmpty) {
  EXPECT_EQ(median({}), 0.0);
  EXPECT_EQ(median({5.0}), 5.0);
  EXPECT_EQ(median({3.0, 1.0, 2.0}), 2.0);
  EXPECT_EQ(median({4.0, 1.0, 3.0, 2.0}), 2.5);
  EXPECT_EQ(median({10.0, 1.0, 1.0, 1.0, 100.0}), 1.0);
}

}  // namespace
}  // namespace hopgemm::bench
