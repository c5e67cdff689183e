// Code generation, the cache-key hash and the JIT settings: pure CPU, no compiler involved.
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>
#include <string>

#include "hopgemm/error.hpp"
#include "hopgemm/jit.hpp"
#include "jit/compiler.hpp"
#include "jit/disk_cache.hpp"
#include "jit/kernel_source.hpp"

namespace {

using namespace hopgemm::jit;

TEST(JitCodegen, ConfigWriter) {
  EXPECT_EQ(ConfigWriter("hopgemm::device::QuantizeConfig").field("kind", 1).field("gran", 128).str(),
            "hopgemm::device::QuantizeConfig{.kind = 1, .gran = 128}");
  EXPECT_EQ(ConfigWriter("C").str(), "C{}");
  EXPECT_EQ(ConfigWriter("C").field("x", -5).field("y", 1ll << 40).str(), "C{.x = -5, .y = 1099511627776}");
}

TEST(JitCodegen, RenderKernelGolden) {
  const KernelSource source = render_kernel(
      "sm90_fp8_gemm", "hopgemm/device/kernels/sm90_fp8_gemm.cuh", "hopgemm::device::sm90_fp8_gemm",
      ConfigWriter("hopgemm::device::Sm90GemmConfig").field("block_m", 128).field("block_n", 160).str());
  EXPECT_EQ(source.family, "sm90_fp8_gemm");
  EXPECT_EQ(source.code,
            "// hopgemm JIT kernel: sm90_fp8_gemm\n"
            "#include <hopgemm/device/kernels/sm90_fp8_gemm.cuh>\n"
            "\n"
            "static __attribute__((used)) void hopgemm_instantiate() {\n"
            "  (void)reinterpret_cast<void*>(&hopgemm::device::sm90_fp8_gemm<"
            "hopgemm::device::Sm90GemmConfig{.block_m = 128, .block_n = 160}>);\n"
            "}\n");
}

TEST(JitCodegen, DistinctConfigsGiveDistinctSources) {
  auto render = [](int n) {
    return render_kernel("f", "h.cuh", "k", ConfigWriter("C").field("n", n).str()).code;
  };
  EXPECT_NE(render(1), render(2));
  EXPECT_EQ(render(3), render(3));
}

TEST(JitHash, FormatAndDeterminism) {
  const std::string h = hash128_hex("hopgemm");
  EXPECT_EQ(h.size(), 32u);
  EXPECT_EQ(h.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_EQ(h, hash128_hex("hopgemm"));
  EXPECT_NE(hash128_hex(""), hash128_hex(std::string(1, '\0')));
  EXPECT_NE(hash128_hex(std::string(16, '\0')), hash128_hex(std::string(17, '\0')));
}

TEST(JitHash, IncrementalEqualsWhole) {
  std::string text;
  for (int i = 0; i < 1000; ++i) text += static_cast<char>(i * 37 + 11);
  const std::string whole = hash128_hex(text);
  for (size_t split : {0u, 1u, 7u, 15u, 16u, 17u, 33u, 999u, 1000u}) {
    Hash128 h;
    h.update(std::string_view(text).substr(0, split));
    h.update(std::string_view(text).substr(split));
    EXPECT_EQ(h.hex(), whole) << split;
  }
  Hash128 bytes;
  for (char c : text) bytes.update(&c, 1);
  EXPECT_EQ(bytes.hex(), whole);
}

TEST(JitHash, FieldsDoNotRunTogether) {
  EXPECT_NE(Hash128().field("ab").field("c").hex(), Hash128().field("a").field("bc").hex());
}

TEST(JitHash, NoCollisionsAndAvalancheOnSmallChanges) {
  std::set<std::string> seen;
  std::string base(64, 'x');
  for (int i = 0; i < 64; ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string s = base;
      s[i] = static_cast<char>(s[i] ^ (1 << bit));
      const std::string h = hash128_hex(s);
      EXPECT_TRUE(seen.insert(h).second);
      // A one-bit change flips about half of the 128 output bits.
      const std::string b = hash128_hex(base);
      int flipped = 0;
      for (int d = 0; d < 32; ++d) {
        const int x = std::stoi(h.substr(d, 1), nullptr, 16) ^ std::stoi(b.substr(d, 1), nullptr, 16);
        flipped += __builtin_popcount(x);
      }
      EXPECT_GT(flipped, 32);
      EXPECT_LT(flipped, 96);
    }
  }
}

TEST(JitSettings, CacheDirSetAndRestore) {
  const std::string before = hopgemm::get_cache_dir();
  EXPECT_FALSE(before.empty());
  hopgemm::set_cache_dir("/tmp/some/where");
  EXPECT_EQ(hopgemm::get_cache_dir(), "/tmp/some/where");
  hopgemm::set_cache_dir("");
  EXPECT_EQ(hopgemm::get_cache_dir(), before);
}

TEST(JitSettings, IncludeDirHoldsTheDeviceHeaders) {
  const std::string dir = include_dir();
  EXPECT_FALSE(dir.empty());
  EXPECT_EQ(device_header_hash().size(), 32u);
  set_include_dir("/nonexistent/include");
  if (std::getenv("HOPGEMM_INCLUDE_DIR") == nullptr) {
    EXPECT_EQ(include_dir(), "/nonexistent/include");
    try {
      device_header_hash();
      ADD_FAILURE() << "no error for a missing header tree";
    } catch (const hopgemm::Error& e) {
      EXPECT_EQ(e.kind(), hopgemm::ErrorKind::kJit);
      EXPECT_NE(std::string(e.what()).find("HOPGEMM_INCLUDE_DIR"), std::string::npos);
    }
  }
  set_include_dir("");
  EXPECT_EQ(include_dir(), dir);
}

TEST(JitSettings, CudaHome) { EXPECT_FALSE(cuda_home().empty()); }

}  // namespace
