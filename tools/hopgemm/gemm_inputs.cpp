#include "gemm_inputs.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>

#include "hopgemm/error.hpp"
#include "hopgemm/layout.hpp"
#include "hopgemm/quantize.hpp"
#include "runtime/cuda_check.hpp"

namespace hopgemm::cli {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Random BF16 values (approximately normal) generated on the host, uploaded once.
bench::DeviceBuffer random_bf16(int64_t rows, int64_t cols, uint32_t seed) {
  std::vector<uint16_t> host(static_cast<size_t>(rows * cols));
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (auto& v : host) {
    const float f = normal(rng);
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    v = static_cast<uint16_t>((bits + 0x7fff + ((bits >> 16) & 1)) >> 16);
  }
  bench::DeviceBuffer buffer(host.size() * 2);
  HOPGEMM_CUDA_CHECK(cudaMemcpy(buffer.get(), host.data(), host.size() * 2, cudaMemcpyHostToDevice));
  return buffer;
}

}  // namespace

std::vector<GemmShape> gemm_shapes(const std::string& suite, const std::string& shape, const std::string& role) {
  if (!role.empty() && !api::gemm_role_from_name(role)) {
    throw Error(ErrorKind::kInvalidArgument, "--role '" + role + "' must be fwd, dgrad or wgrad");
  }
  std::vector<GemmShape> out;
  if (!shape.empty()) {
    // [role:]MxNxK, role fwd (default), dgrad (same kernel, recorded as such) or wgrad (1D1D, FP32 D += A B^T).
    api::GemmRole shape_role = api::GemmRole::kForward;
    std::string dims = shape;
    if (const auto colon = shape.find(':'); colon != std::string::npos) {
      const auto named = api::gemm_role_from_name(shape.substr(0, colon));
      if (!named) throw Error(ErrorKind::kInvalidArgument, "--shape '" + shape + "': role must be fwd, dgrad or wgrad");
      shape_role = *named;
      dims = shape.substr(colon + 1);
    }
    long long m = 0, n = 0, k = 0;
    char tail = 0;
    if (std::sscanf(dims.c_str(), "%lldx%lldx%lld%c", &m, &n, &k, &tail) != 3 || m <= 0 || n <= 0 || k <= 0) {
      throw Error(ErrorKind::kInvalidArgument, "--shape '" + shape + "' must be [fwd:|dgrad:|wgrad:]MxNxK with positive integers");
    }
    // The op's own alignment rules (K: 16-byte TMA rows of A and B; N: 16-byte rows of D), checked here so that
    // a bad --shape fails at once instead of once per candidate after compiling them all.
    const long long n_multiple = shape_role == api::GemmRole::kWgrad ? 4 : 8;
    if (k % 16 != 0 || n % n_multiple != 0) {
      throw Error(ErrorKind::kInvalidArgument, "--shape '" + shape + "': K must be a multiple of 16 and N of " +
                                                   std::to_string(n_multiple) + " (16-byte rows of A, B and D)");
    }
    out.push_back({shape_role, m, n, k});
    return out;
  }
  for (const auto& g : api::suite_gemms(suite))
    if (role.empty() || role == api::gemm_role_name(g.role)) out.push_back({g.role, g.m, g.n, g.k});
  return out;
}

GemmInputs::GemmInputs(const GemmShape& s, bool mn_major_sfa, uint32_t seed, cudaStream_t stream)
    : shape(s),
      a16(random_bf16(s.m, s.k, seed)),
      b16(random_bf16(s.n, s.k, seed + 1)),
      a8(s.m * s.k),
      b8(s.n * s.k),
      sfa(s.m * ceil_div(s.k, 128) * 4),
      sfa_mn(get_tma_aligned_size(s.m, 4) * ceil_div(s.k, 128) * 4),
      sfb((s.wgrad() ? s.n : ceil_div(s.n, 128)) * ceil_div(s.k, 128) * 4),
      sfb_mn(s.wgrad() ? get_tma_aligned_size(s.n, 4) * ceil_div(s.k, 128) * 4 : 0),
      out_dtype(s.wgrad() ? DType::kFloat32 : DType::kBFloat16) {
  const int64_t sk = ceil_div(s.k, 128);
  d = bench::DeviceBuffer(s.m * s.n * dtype_size(out_dtype));
  a16v = make_tensor(a16.get(), DType::kBFloat16, {s.m, s.k}, 0);
  b16v = make_tensor(b16.get(), DType::kBFloat16, {s.n, s.k}, 0);
  a8v = make_tensor(a8.get(), DType::kFloat8E4M3, {s.m, s.k}, 0);
  b8v = make_tensor(b8.get(), DType::kFloat8E4M3, {s.n, s.k}, 0);
  const TensorView sfa_row = make_tensor(sfa.get(), DType::kFloat32, {s.m, sk}, 0);
  sfbv = make_tensor(sfb.get(), DType::kFloat32, {s.wgrad() ? s.n : ceil_div(s.n, 128), sk}, 0);
  dv = make_tensor(d.get(), out_dtype, {s.m, s.n}, 0);
  per_token_cast_to_fp8(a16v, a8v, sfa_row, false, 128, stream);
  if (s.wgrad()) {
    per_token_cast_to_fp8(b16v, b8v, sfbv, false, 128, stream);
  } else {
    per_block_cast_to_fp8(b16v, b8v, sfbv, false, 128, stream);
  }
  sfav = sfa_row;
  if (mn_major_sfa) {
    // MN-major TMA-aligned per-row scales (DeepGEMM's layout): sfa, and sfb too where it is per row (1D1D).
    sfav = make_tensor(sfa_mn.get(), DType::kFloat32, {s.m, sk}, {1, get_tma_aligned_size(s.m, 4)}, 0);
    get_mn_major_tma_aligned_tensor(sfa_row, sfav, stream);
    if (s.wgrad()) {
      const TensorView sfb_row = sfbv;
      sfbv = make_tensor(sfb_mn.get(), DType::kFloat32, {s.n, sk}, {1, get_tma_aligned_size(s.n, 4)}, 0);
      get_mn_major_tma_aligned_tensor(sfb_row, sfbv, stream);
    }
  }
  HOPGEMM_CUDA_CHECK(cudaMemsetAsync(d.get(), 0, d.bytes(), stream));
  HOPGEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
}

double GemmInputs::bytes() const {
  return double(shape.m) * shape.k + double(shape.n) * shape.k +
         double(shape.m) * shape.n * dtype_size(out_dtype) * (shape.wgrad() ? 2 : 1) + double(sfa.bytes() + sfb.bytes());
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

}  // namespace hopgemm::cli
