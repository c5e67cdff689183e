// The driver entry points are resolved by base name at the headers' CUDA_VERSION (runtime/driver.cpp), which
// yields each symbol's newest ABI: "cuStreamGetCtx" is cuStreamGetCtx_v2 in CUDA 13, with a third parameter.
// The DriverApi field must be typed with that version, or the call passes too few arguments (it crashed in the
// driver on the GPU machine). This test reads cuda.h and our two source files and checks every resolved entry.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The function a name declares or refers to after cuda.h's `#define NAME NAME_vN` renames (the per-thread
// default-stream wrappers, `#define NAME __CUDA_API_PTSZ(NAME)`, keep the name).
std::string renamed(const std::map<std::string, std::string>& defines, const std::string& name) {
  auto it = defines.find(name);
  return it == defines.end() ? name : it->second;
}

TEST(DriverTable, EveryEntryPointIsTypedWithTheAbiItResolvesTo) {
  const std::string cuda_h = read_file(HOPGEMM_CUDA_INCLUDE_DIR "/cuda.h");
  const std::string table = read_file(HOPGEMM_SOURCE_DIR "/src/runtime/driver.hpp");
  const std::string resolver = read_file(HOPGEMM_SOURCE_DIR "/src/runtime/driver.cpp");
  ASSERT_FALSE(cuda_h.empty()) << HOPGEMM_CUDA_INCLUDE_DIR "/cuda.h";
  ASSERT_FALSE(table.empty());
  ASSERT_FALSE(resolver.empty());

  std::map<std::string, std::string> defines;  // cuCtxPushCurrent -> cuCtxPushCurrent_v2
  const std::regex define_re(R"(#define\s+(cu\w+)\s+(cu\w+_v\d+)\b)");
  for (std::sregex_iterator it(cuda_h.begin(), cuda_h.end(), define_re), end; it != end; ++it) {
    defines[(*it)[1]] = (*it)[2];
  }
  std::set<std::string> declared;  // every driver function cuda.h declares, after the renames
  const std::regex decl_re(R"(CUresult\s+CUDAAPI\s+(cu\w+)\s*\()");
  for (std::sregex_iterator it(cuda_h.begin(), cuda_h.end(), decl_re), end; it != end; ++it) {
    declared.insert(renamed(defines, (*it)[1]));
  }
  auto newest_abi = [&](const std::string& base) {
    std::string newest = renamed(defines, base);
    for (int v = 2; v <= 9; ++v) {
      const std::string candidate = base + "_v" + std::to_string(v);
      if (declared.count(candidate)) newest = candidate;
    }
    return newest;
  };

  std::map<std::string, std::string> field_types;  // field -> the function its decltype names
  const std::regex field_re(R"(decltype\(&::(cu\w+)\)\s+(cu\w+)\s*=)");
  for (std::sregex_iterator it(table.begin(), table.end(), field_re), end; it != end; ++it) {
    field_types[(*it)[2]] = (*it)[1];
  }
  const std::regex need_re(R"re(need\("(cu\w+)",\s*r\.api\.(cu\w+)\))re");
  int checked = 0;
  for (std::sregex_iterator it(resolver.begin(), resolver.end(), need_re), end; it != end; ++it) {
    const std::string symbol = (*it)[1], field = (*it)[2];
    ASSERT_TRUE(field_types.count(field)) << "DriverApi has no decltype field " << field;
    EXPECT_EQ(renamed(defines, field_types[field]), newest_abi(symbol))
        << "DriverApi::" << field << " is resolved as \"" << symbol << "\" at CUDA_VERSION, i.e. "
        << newest_abi(symbol) << ", but typed as " << field_types[field];
    ++checked;
  }
  EXPECT_GE(checked, 10);
}

}  // namespace
