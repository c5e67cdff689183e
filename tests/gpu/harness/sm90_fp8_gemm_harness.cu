// Standalone GPU harness for include/hopgemm/device/kernels/sm90_fp8_gemm.cuh.
// Compiles each kernel configuration at run time with NVRTC exactly as the JIT does (sm_90a, C++20,
// -default-device, include/ only), loads the cubin through the driver, builds the TMA descriptors as
// documented in sm90_fp8_gemm_types.cuh, launches with cuLaunchKernelEx, checks against a float64
// CPU reference of the dequantised inputs and times it. (nvcc cannot emit host launch stubs for a
// kernel templated on a class-type NTTP, and the library never needs them: it loads cubins.)
//
//   nvcc -std=c++20 -O2 -I include tests/gpu/harness/sm90_fp8_gemm_harness.cu -lcuda -lnvrtc -o harness
//   ./harness <include dir> [check] [perf]          (both when neither is given)
//
// Inputs are random e4m3 codes (never zero, magnitudes 2^-3..2^4) and random positive scales; D is
// poisoned with NaN before every run, guard bytes around D must stay untouched, every element must be
// finite, calc_diff(D, ref) < 1e-3 over the checked rows, and a rerun must be bitwise identical.
#include <cuda.h>
#include <cuda_runtime.h>
#include <nvrtc.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "hopgemm/device/kernels/sm90_fp8_gemm_types.cuh"

using hopgemm::device::Sm90Fp8GemmConfig;
using hopgemm::device::Sm90Fp8GemmParams;
namespace hd = hopgemm::device;

#define CUDA_CHECK(x)                                                                                 \
  do {                                                                                                \
    cudaError_t e_ = (x);                                                                             \
    if (e_ != cudaSuccess) {                                                                          \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));         \
      std::exit(1);                                                                                   \
    }                                                                                                 \
  } while (0)
#define CU_CHECK(x)                                                                                   \
  do {                                                                                                \
    CUresult r_ = (x);                                                                                \
    if (r_ != CUDA_SUCCESS) {                                                                         \
      const char* s_ = nullptr;                                                                       \
      cuGetErrorString(r_, &s_);                                                                      \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, s_ ? s_ : "?");                  \
      std::exit(1);                                                                                   \
    }                                                                                                 \
  } while (0)

// ---- host helpers ---------------------------------------------------------------------------------
static float e4m3_to_float(uint8_t v) {
  const int sign = v >> 7, exp = (v >> 3) & 15, man = v & 7;
  const float mag = exp == 0 ? std::ldexp(man / 8.0f, -6) : std::ldexp(1.0f + man / 8.0f, exp - 7);
  return sign ? -mag : mag;
}
static float bf16_to_float(uint16_t v) {
  uint32_t u = static_cast<uint32_t>(v) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
static uint64_t splitmix(uint64_t& s) {
  uint64_t z = (s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
template <typename F>
static void parallel_for(int64_t n, F&& f) {
  const int t = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> th;
  for (int i = 0; i < t; ++i)
    th.emplace_back([&, i] {
      for (int64_t j = i; j < n; j += t) f(j);
    });
  for (auto& x : th) x.join();
}
static void fill_e4m3(std::vector<uint8_t>& v, uint64_t seed) {
  parallel_for(static_cast<int64_t>((v.size() + 4095) / 4096), [&](int64_t c) {
    uint64_t s = seed * 7919 + c;
    for (size_t i = c * 4096; i < std::min(v.size(), static_cast<size_t>(c + 1) * 4096); ++i) {
      const uint64_t r = splitmix(s);
      v[i] = static_cast<uint8_t>(((r & 1) << 7) | ((4 + (r >> 1) % 8) << 3) | ((r >> 8) & 7));  // exp 4..11
    }
  });
}
static void fill_scales(std::vector<float>& v, uint64_t seed) {
  uint64_t s = seed;
  for (auto& x : v) x = 0.25f + (splitmix(s) % 1024) / 512.0f;
}

// 2-D tensor map, innermost dim first, as the kernel's host contract prescribes.
static hd::TmaDescriptor make_tma_2d(const void* ptr, CUtensorMapDataType dtype, uint64_t dim0, uint64_t dim1,
                                     uint64_t stride1_bytes, uint32_t box0, uint32_t box1, int swizzle_bytes) {
  CUtensorMap map;
  const cuuint64_t dims[2] = {dim0, dim1};
  const cuuint64_t strides[1] = {stride1_bytes};
  const cuuint32_t box[2] = {box0, box1};
  const cuuint32_t elem_strides[2] = {1, 1};
  const CUtensorMapSwizzle swz = swizzle_bytes == 128  ? CU_TENSOR_MAP_SWIZZLE_128B
                                 : swizzle_bytes == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
                                 : swizzle_bytes == 32 ? CU_TENSOR_MAP_SWIZZLE_32B
                                                       : CU_TENSOR_MAP_SWIZZLE_NONE;
  CU_CHECK(cuTensorMapEncodeTiled(&map, dtype, 2, const_cast<void*>(ptr), dims, strides, box, elem_strides,
                       CU_TENSOR_MAP_INTERLEAVE_NONE, swz, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                       CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
  hd::TmaDescriptor d;
  static_assert(sizeof(d) == sizeof(map));
  std::memcpy(&d, &map, sizeof(map));
  return d;
}

// ---- JIT: config -> NVRTC -> cubin -> CUfunction --------------------------------------------------
static std::string g_include_dir = "include";

static std::string config_literal(const Sm90Fp8GemmConfig& c) {
  char buf[512];
  std::snprintf(buf, sizeof(buf),
                "hopgemm::device::Sm90Fp8GemmConfig{.block_m = %d, .block_n = %d, .num_stages = %d, .cluster_m = %d, "
                ".cluster_n = %d, .recipe = %d, .out_dtype = %d, .accumulate = %d, .sfa_k_major = %d, "
                ".sfb_k_major = %d, .num_sms = %d, .raster_band = %d, .promote_overlap = %d, .wg_order = %d, "
                ".d_passes = %d, .d_in_stage = %d, .shape_n = %d, .shape_k = %d}",
                c.block_m, c.block_n, c.num_stages, c.cluster_m, c.cluster_n, c.recipe, c.out_dtype, c.accumulate,
                c.sfa_k_major, c.sfb_k_major, c.num_sms, c.raster_band, c.promote_overlap, c.wg_order, c.d_passes,
                c.d_in_stage, c.shape_n, c.shape_k);
  return buf;
}

#define NVRTC_CHECK(x)                                                                       \
  do {                                                                                       \
    nvrtcResult r_ = (x);                                                                    \
    if (r_ != NVRTC_SUCCESS) {                                                               \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, nvrtcGetErrorString(r_)); \
      std::exit(1);                                                                          \
    }                                                                                        \
  } while (0)

static CUfunction get_kernel(const Sm90Fp8GemmConfig& c) {
  static std::map<std::string, CUfunction> cache;
  const std::string lit = config_literal(c);
  if (auto it = cache.find(lit); it != cache.end()) return it->second;
  const std::string name = "hopgemm::device::sm90_fp8_gemm_kernel<" + lit + ">";
  const std::string src = "#include <hopgemm/device/kernels/sm90_fp8_gemm.cuh>\ntemplate __global__ void " + name +
                          "(const __grid_constant__ hopgemm::device::Sm90Fp8GemmParams);\n";
  const std::string inc = "-I" + g_include_dir;
  const char* extra = std::getenv("HARNESS_NVRTC_OPT");  // experiments, e.g. -DNAME
  const char* opts[] = {"--gpu-architecture=sm_90a", "-std=c++20", "-default-device", inc.c_str(), "-Xptxas=-v",
                        extra ? extra : "-DHARNESS"};
  nvrtcProgram prog;
  NVRTC_CHECK(nvrtcCreateProgram(&prog, src.c_str(), "kernel.cu", 0, nullptr, nullptr));
  NVRTC_CHECK(nvrtcAddNameExpression(prog, ("&" + name).c_str()));
  const auto t0 = std::chrono::steady_clock::now();
  const nvrtcResult r = nvrtcCompileProgram(prog, 6, opts);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  size_t log_size;
  NVRTC_CHECK(nvrtcGetProgramLogSize(prog, &log_size));
  std::string log(log_size, '\0');
  NVRTC_CHECK(nvrtcGetProgramLog(prog, log.data()));
  if (r != NVRTC_SUCCESS) {
    std::fprintf(stderr, "NVRTC failed for %s:\n%s\n", lit.c_str(), log.c_str());
    std::exit(1);
  }
  const bool spills = log.find(" 0 bytes spill stores, 0 bytes spill loads") == std::string::npos;
  std::printf("  [nvrtc %.0f ms%s] %s\n", ms, spills ? ", SPILLS" : "", lit.c_str() + 33);
  if (spills) std::printf("%s\n", log.c_str());
  const char* lowered;
  NVRTC_CHECK(nvrtcGetLoweredName(prog, ("&" + name).c_str(), &lowered));
  const std::string mangled = lowered;
  size_t cubin_size;
  NVRTC_CHECK(nvrtcGetCUBINSize(prog, &cubin_size));
  std::vector<char> cubin(cubin_size);
  NVRTC_CHECK(nvrtcGetCUBIN(prog, cubin.data()));
  NVRTC_CHECK(nvrtcDestroyProgram(&prog));
  CUmodule mod;
  CUfunction f;
  CU_CHECK(cuModuleLoadData(&mod, cubin.data()));
  CU_CHECK(cuModuleGetFunction(&f, mod, mangled.c_str()));
  CU_CHECK(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, hd::smem_bytes(c)));
  cache[lit] = f;
  return f;
}

// ---- one problem ------------------------------------------------------------------------------------
struct Problem {
  int m, n, k;
  bool c_aliased = true;  // accumulate: D holds C already (true) or C is copied into D first (false)
};

struct Result {
  bool ok = true;
  double diff = 0, us = 0;
  std::string note;
};

static void* g_flush = nullptr;
static constexpr size_t kFlushBytes = 256ull << 20;

// Clusters of 2 may not all be co-resident (GPCs), and a persistent grid larger than what fits runs
// in two waves: shrink num_sms to twice the number of clusters that fit.
static int g_num_sms_override = 0;  // "sms=N" on the command line: grid-size experiments

static Sm90Fp8GemmConfig fit_grid(Sm90Fp8GemmConfig c) {
  if (g_num_sms_override) c.num_sms = g_num_sms_override;
  if (hd::cluster_size(c) == 1) return c;
  CUlaunchConfig cfg{};
  cfg.gridDimX = c.num_sms;
  cfg.gridDimY = cfg.gridDimZ = 1;
  cfg.blockDimX = hd::num_threads(c);
  cfg.blockDimY = cfg.blockDimZ = 1;
  cfg.sharedMemBytes = hd::smem_bytes(c);
  CUlaunchAttribute attr;
  attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  attr.value.clusterDim.x = hd::cluster_size(c);
  attr.value.clusterDim.y = attr.value.clusterDim.z = 1;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  int clusters = 0;
  CU_CHECK(cuOccupancyMaxActiveClusters(&clusters, get_kernel(c), &cfg));
  if (clusters * hd::cluster_size(c) < c.num_sms) {
    static std::map<std::string, bool> told;
    if (!told[config_literal(c)]) std::printf("  [only %d clusters of %d fit: num_sms %d -> %d]\n", clusters,
                                              hd::cluster_size(c), c.num_sms, clusters * hd::cluster_size(c));
    told[config_literal(c)] = true;
    c.num_sms = clusters * hd::cluster_size(c);
  }
  return c;
}

static Result run(const Sm90Fp8GemmConfig& C_in, const Problem& p, bool check, bool time, uint64_t seed) {
  const Sm90Fp8GemmConfig C = fit_grid(C_in);
  if (!hd::is_valid(C)) {
    std::fprintf(stderr, "invalid config %s\n", config_literal(C).c_str());
    std::exit(1);
  }
  const CUfunction kernel = get_kernel(C);
  const bool k1D1D = C.recipe == hd::kRecipe1D1D, kFp32 = C.out_dtype == hd::kOutFp32;
  const int kElem = kFp32 ? 4 : 2;
  const int m = p.m, n = p.n, k = p.k, sfk = (k + 127) / 128;
  const int tma_m = (m + 3) / 4 * 4, tma_n = (n + 3) / 4 * 4;

  // Host inputs.
  std::vector<uint8_t> a(static_cast<size_t>(m) * k), b(static_cast<size_t>(n) * k);
  fill_e4m3(a, seed * 3 + 1);
  fill_e4m3(b, seed * 3 + 2);
  std::vector<float> sfa(static_cast<size_t>(m) * sfk);  // logical [m][sfk]
  const int sfb_rows = k1D1D ? n : (n + 127) / 128;
  std::vector<float> sfb(static_cast<size_t>(sfb_rows) * sfk);  // logical [rows][sfk]
  fill_scales(sfa, seed * 5 + 3);
  fill_scales(sfb, seed * 5 + 4);
  // Device layouts: MN-major TMA-aligned (padding rows NaN: the kernel must never read them) or row-major.
  auto mn_major = [](const std::vector<float>& v, int rows, int cols, int ld) {
    std::vector<float> t(static_cast<size_t>(ld) * cols, NAN);
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c) t[static_cast<size_t>(c) * ld + r] = v[static_cast<size_t>(r) * cols + c];
    return t;
  };
  const std::vector<float> sfa_dev = C.sfa_k_major ? sfa : mn_major(sfa, m, sfk, tma_m);
  const std::vector<float> sfb_dev = (!k1D1D || C.sfb_k_major) ? sfb : mn_major(sfb, n, sfk, tma_n);
  std::vector<uint8_t> c_host;
  if (C.accumulate) {
    c_host.resize(static_cast<size_t>(m) * n * kElem);
    uint64_t s = seed * 11 + 5;
    for (size_t i = 0; i < static_cast<size_t>(m) * n; ++i) {
      const float v = (static_cast<int>(splitmix(s) % 2001) - 1000) / 10.0f;
      if (kFp32) {
        std::memcpy(&c_host[i * 4], &v, 4);
      } else {
        uint32_t u;
        std::memcpy(&u, &v, 4);
        const uint16_t h = static_cast<uint16_t>(u >> 16);  // exactly representable: round-trip below
        std::memcpy(&c_host[i * 2], &h, 2);
      }
    }
  }

  // Device buffers; D sits between two guard zones.
  constexpr size_t kGuard = 4096;
  const size_t d_bytes = static_cast<size_t>(m) * n * kElem;
  uint8_t *d_a, *d_b, *d_dbuf, *d_c = nullptr;
  float *d_sfa, *d_sfb;
  CUDA_CHECK(cudaMalloc(&d_a, a.size()));
  CUDA_CHECK(cudaMalloc(&d_b, b.size()));
  CUDA_CHECK(cudaMalloc(&d_sfa, sfa_dev.size() * 4));
  CUDA_CHECK(cudaMalloc(&d_sfb, sfb_dev.size() * 4));
  CUDA_CHECK(cudaMalloc(&d_dbuf, d_bytes + 2 * kGuard));
  uint8_t* d_d = d_dbuf + kGuard;
  CUDA_CHECK(cudaMemcpy(d_a, a.data(), a.size(), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d_b, b.data(), b.size(), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d_sfa, sfa_dev.data(), sfa_dev.size() * 4, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d_sfb, sfb_dev.data(), sfb_dev.size() * 4, cudaMemcpyHostToDevice));
  if (C.accumulate && !p.c_aliased) {
    CUDA_CHECK(cudaMalloc(&d_c, d_bytes));
    CUDA_CHECK(cudaMemcpy(d_c, c_host.data(), d_bytes, cudaMemcpyHostToDevice));
  }

  // Descriptors, per the contract in sm90_fp8_gemm_types.cuh.
  Sm90Fp8GemmParams prm{};
  prm.tma_a = make_tma_2d(d_a, CU_TENSOR_MAP_DATA_TYPE_UINT8, k, m, k, 128, C.block_m / C.cluster_n, 128);
  prm.tma_b = make_tma_2d(d_b, CU_TENSOR_MAP_DATA_TYPE_UINT8, k, n, k, 128, C.block_n / C.cluster_m, 128);
  if (!C.sfa_k_major)
    prm.tma_sfa = make_tma_2d(d_sfa, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, m, sfk, tma_m * 4ull, C.block_m, 1, 0);
  if (k1D1D && !C.sfb_k_major)
    prm.tma_sfb = make_tma_2d(d_sfb, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, n, sfk, tma_n * 4ull, C.block_n, 1, 0);
  const int kSwz = hd::d_swizzle_bytes(C);
  prm.tma_d = make_tma_2d(d_d, kFp32 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, n, m,
                          static_cast<uint64_t>(n) * kElem, kSwz / kElem, C.block_m / hd::num_math_wgs(C), kSwz);
  prm.sfa = d_sfa;
  prm.sfb = d_sfb;
  prm.m = m;
  prm.n = n;
  prm.k = k;
  prm.sfa_ld = sfk;
  prm.sfb_ld = sfk;
  prm.sfb_kstride = 1;

  CUlaunchConfig cfg{};
  cfg.gridDimX = C.num_sms;
  cfg.gridDimY = cfg.gridDimZ = 1;
  cfg.blockDimX = hd::num_threads(C);
  cfg.blockDimY = cfg.blockDimZ = 1;
  cfg.sharedMemBytes = hd::smem_bytes(C);
  CUlaunchAttribute attrs[2];
  unsigned na = 0;
  if (hd::cluster_size(C) > 1) {
    attrs[na].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attrs[na].value.clusterDim.x = hd::cluster_size(C);
    attrs[na].value.clusterDim.y = 1;
    attrs[na].value.clusterDim.z = 1;
    ++na;
  }
  attrs[na].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;  // PDL on: must be harmless
  attrs[na].value.programmaticStreamSerializationAllowed = 1;
  ++na;
  cfg.attrs = attrs;
  cfg.numAttrs = na;
  auto prepare_d = [&] {  // poison (or C), guards 0xA5
    CUDA_CHECK(cudaMemset(d_dbuf, 0xA5, d_bytes + 2 * kGuard));
    if (C.accumulate) {
      if (p.c_aliased)
        CUDA_CHECK(cudaMemcpy(d_d, c_host.data(), d_bytes, cudaMemcpyHostToDevice));
      else
        CUDA_CHECK(cudaMemcpy(d_d, d_c, d_bytes, cudaMemcpyDeviceToDevice));  // the host's C -> D copy
    } else {
      CUDA_CHECK(cudaMemset(d_d, 0xFF, d_bytes));  // NaN in BF16 and FP32
    }
  };
  auto launch = [&] {
    void* args[] = {&prm};
    CU_CHECK(cuLaunchKernelEx(&cfg, kernel, args, nullptr));
  };

  Result res;
  if (check) {
    std::vector<uint8_t> out1(d_bytes + 2 * kGuard), out2(d_bytes + 2 * kGuard);
    prepare_d();
    launch();
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(out1.data(), d_dbuf, out1.size(), cudaMemcpyDeviceToHost));
    prepare_d();
    launch();
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(out2.data(), d_dbuf, out2.size(), cudaMemcpyDeviceToHost));
    if (std::memcmp(out1.data(), out2.data(), out1.size()) != 0) {
      res.ok = false;
      res.note += " rerun-not-bitwise-identical";
    }
    for (size_t i = 0; i < kGuard; ++i)
      if (out1[i] != 0xA5 || out1[kGuard + d_bytes + i] != 0xA5) {
        res.ok = false;
        res.note += " guard-overwritten";
        break;
      }
    auto out_at = [&](size_t i) {
      if (kFp32) {
        float f;
        std::memcpy(&f, &out1[kGuard + i * 4], 4);
        return static_cast<double>(f);
      }
      uint16_t h;
      std::memcpy(&h, &out1[kGuard + i * 2], 2);
      return static_cast<double>(bf16_to_float(h));
    };
    size_t nonfinite = 0;
    for (size_t i = 0; i < static_cast<size_t>(m) * n; ++i) nonfinite += !std::isfinite(out_at(i));
    if (nonfinite) {
      res.ok = false;
      res.note += " nonfinite=" + std::to_string(nonfinite);
    }
    // Reference rows: all for small M, else both edges and a stride.
    std::vector<int> rows;
    for (int r = 0; r < m; ++r)
      if (static_cast<int64_t>(m) * n * k <= (int64_t(4) << 30) || r < 130 || r >= m - 130 || r % 61 == 0)
        rows.push_back(r);
    std::vector<float> af(a.size()), bfv(b.size());
    parallel_for(static_cast<int64_t>(m), [&](int64_t r) {
      for (int j = 0; j < k; ++j) af[r * k + j] = e4m3_to_float(a[r * k + j]);
    });
    parallel_for(static_cast<int64_t>(n), [&](int64_t r) {
      for (int j = 0; j < k; ++j) bfv[r * k + j] = e4m3_to_float(b[r * k + j]);
    });
    std::vector<double> xy(rows.size(), 0), xx(rows.size(), 0);
    parallel_for(static_cast<int64_t>(rows.size()), [&](int64_t ri) {
      const int r = rows[ri];
      for (int c = 0; c < n; ++c) {
        double ref = 0;
        for (int kb = 0; kb < sfk; ++kb) {
          double part = 0;
          for (int j = kb * 128; j < std::min(k, kb * 128 + 128); ++j)
            part += static_cast<double>(af[static_cast<size_t>(r) * k + j]) * bfv[static_cast<size_t>(c) * k + j];
          const double sb = k1D1D ? sfb[static_cast<size_t>(c) * sfk + kb] : sfb[static_cast<size_t>(c / 128) * sfk + kb];
          ref += part * sfa[static_cast<size_t>(r) * sfk + kb] * sb;
        }
        if (C.accumulate) {
          const size_t i = static_cast<size_t>(r) * n + c;
          if (kFp32) {
            float f;
            std::memcpy(&f, &c_host[i * 4], 4);
            ref += f;
          } else {
            uint16_t h;
            std::memcpy(&h, &c_host[i * 2], 2);
            ref += bf16_to_float(h);
          }
        }
        const double y = out_at(static_cast<size_t>(r) * n + c);
        xy[ri] += ref * y;
        xx[ri] += ref * ref + y * y;
      }
    });
    double sxy = 0, sxx = 0;
    for (size_t i = 0; i < rows.size(); ++i) sxy += xy[i], sxx += xx[i];
    res.diff = sxx == 0 ? 0 : 1 - 2 * sxy / sxx;
    if (!(res.diff < 1e-3)) res.ok = false;
    if (rows.size() != static_cast<size_t>(m)) res.note += " rows-sampled=" + std::to_string(rows.size());
  }
  if (time) {
    cudaEvent_t e0, e1;
    CUDA_CHECK(cudaEventCreate(&e0));
    CUDA_CHECK(cudaEventCreate(&e1));
    prepare_d();
    for (int i = 0; i < 3; ++i) launch();
    std::vector<float> ts;
    for (int i = 0; i < 30; ++i) {
      CUDA_CHECK(cudaMemsetAsync(g_flush, i, kFlushBytes));  // evict L2
      CUDA_CHECK(cudaEventRecord(e0));
      launch();
      CUDA_CHECK(cudaEventRecord(e1));
      CUDA_CHECK(cudaEventSynchronize(e1));
      float ms;
      CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
      ts.push_back(ms);
    }
    std::sort(ts.begin(), ts.end());
    res.us = ts[ts.size() / 2] * 1e3;
    CUDA_CHECK(cudaEventDestroy(e0));
    CUDA_CHECK(cudaEventDestroy(e1));
  }
  CUDA_CHECK(cudaFree(d_a));
  CUDA_CHECK(cudaFree(d_b));
  CUDA_CHECK(cudaFree(d_sfa));
  CUDA_CHECK(cudaFree(d_sfb));
  CUDA_CHECK(cudaFree(d_dbuf));
  if (d_c) CUDA_CHECK(cudaFree(d_c));
  return res;
}

// ---- configurations under test ---------------------------------------------------------------------
constexpr Sm90Fp8GemmConfig kC128x128{.block_m = 128, .block_n = 128, .num_stages = 5, .promote_overlap = 1};
constexpr Sm90Fp8GemmConfig kC128x128A2O{.block_m = 128, .block_n = 128, .num_stages = 5, .cluster_n = 2, .promote_overlap = 1};
constexpr Sm90Fp8GemmConfig kC64x112B2O{.block_m = 64, .block_n = 112, .num_stages = 9, .cluster_m = 2, .promote_overlap = 1};
constexpr Sm90Fp8GemmConfig kC1D1DAccO{.block_m = 128, .block_n = 128, .num_stages = 4, .recipe = hd::kRecipe1D1D,
                                       .out_dtype = hd::kOutFp32, .accumulate = 1, .sfb_k_major = 0, .promote_overlap = 1};
constexpr Sm90Fp8GemmConfig kC128x128A2{.block_m = 128, .block_n = 128, .num_stages = 5, .cluster_n = 2};
constexpr Sm90Fp8GemmConfig kC128x128B2{.block_m = 128, .block_n = 128, .num_stages = 5, .cluster_m = 2};
constexpr Sm90Fp8GemmConfig kC256x128A2{.block_m = 256, .block_n = 128, .num_stages = 3, .cluster_n = 2, .raster_band = 8};
constexpr Sm90Fp8GemmConfig kC128x192B2{.block_m = 128, .block_n = 192, .num_stages = 4, .cluster_m = 2};
constexpr Sm90Fp8GemmConfig kC128x160RowSfa{.block_m = 128, .block_n = 160, .num_stages = 4, .cluster_m = 2, .sfa_k_major = 1};
constexpr Sm90Fp8GemmConfig kC64x112B2{.block_m = 64, .block_n = 112, .num_stages = 9, .cluster_m = 2};
constexpr Sm90Fp8GemmConfig kC64x16A2{.block_m = 64, .block_n = 16, .num_stages = 16, .cluster_n = 2};
constexpr Sm90Fp8GemmConfig kC64x16A2O{.block_m = 64, .block_n = 16, .num_stages = 16, .cluster_n = 2, .promote_overlap = 1};
constexpr Sm90Fp8GemmConfig kC1D1DAcc{.block_m = 128, .block_n = 128, .num_stages = 4, .recipe = hd::kRecipe1D1D,
                                      .out_dtype = hd::kOutFp32, .accumulate = 1, .sfb_k_major = 0};
constexpr Sm90Fp8GemmConfig kC1D1DRowBf16{.block_m = 64, .block_n = 120, .num_stages = 8, .cluster_n = 2,
                                          .recipe = hd::kRecipe1D1D, .sfa_k_major = 1, .sfb_k_major = 1};
// v5: turn-taking math warpgroups (wg_order), D staged in the last pipeline stage (4 stages for 256x128).
constexpr Sm90Fp8GemmConfig kC256x128A2W{.block_m = 256, .block_n = 128, .num_stages = 3, .cluster_n = 2, .raster_band = 8,
                                         .wg_order = 1};
constexpr Sm90Fp8GemmConfig kC256x128A2S4{.block_m = 256, .block_n = 128, .num_stages = 4, .cluster_n = 2, .raster_band = 8,
                                          .d_passes = 2, .d_in_stage = 1};
constexpr Sm90Fp8GemmConfig kC256x128A2S4W{.block_m = 256, .block_n = 128, .num_stages = 4, .cluster_n = 2,
                                           .raster_band = 8, .wg_order = 1, .d_passes = 2, .d_in_stage = 1};
constexpr Sm90Fp8GemmConfig kC256x128A2S4WB16{.block_m = 256, .block_n = 128, .num_stages = 4, .cluster_n = 2,
                                              .raster_band = 16, .wg_order = 1, .d_passes = 2, .d_in_stage = 1};
constexpr Sm90Fp8GemmConfig kC128x192B2W{.block_m = 128, .block_n = 192, .num_stages = 4, .cluster_m = 2, .wg_order = 1};
constexpr Sm90Fp8GemmConfig kC128x128A2W{.block_m = 128, .block_n = 128, .num_stages = 5, .cluster_n = 2, .wg_order = 1};
constexpr Sm90Fp8GemmConfig kC1D1DAccS{.block_m = 128, .block_n = 128, .num_stages = 5, .recipe = hd::kRecipe1D1D,
                                       .out_dtype = hd::kOutFp32, .accumulate = 1, .sfb_k_major = 0, .wg_order = 1,
                                       .d_passes = 4, .d_in_stage = 1};
constexpr Sm90Fp8GemmConfig kC1D2DFp32{.block_m = 128, .block_n = 96, .num_stages = 5, .out_dtype = hd::kOutFp32};

static int g_failures = 0;
static void report(const char* cfg, const Problem& p, const Result& r, bool check, bool time, double flops_only = 0) {
  const double flops = 2.0 * p.m * p.n * p.k;
  const double bytes = double(p.m) * p.k + double(p.n) * p.k + double(p.m) * p.n * 2;
  std::printf("%-14s %5d x %5d x %5d %s", cfg, p.m, p.n, p.k, p.c_aliased ? "" : "(C distinct)");
  if (check) std::printf(" diff=%.2e %s%s", r.diff, r.ok ? "PASS" : "FAIL", r.note.c_str());
  if (time) std::printf(" %9.1f us %7.1f TFLOPS %7.1f GB/s", r.us, flops / r.us * 1e-6, bytes / r.us * 1e-3);
  std::printf("\n");
  std::fflush(stdout);
  (void)flops_only;
  if (check && !r.ok) ++g_failures;
}

#define CHECK_CASE(cfg, ...)                             \
  do {                                                   \
    const Problem p_{__VA_ARGS__};                       \
    report(#cfg, p_, run(cfg, p_, true, false, ++seed), true, false); \
  } while (0)
static const char* g_only = nullptr;  // "only=NAME": run only the perf cases of that config
#define PERF_CASE(cfg, ...)                              \
  do {                                                   \
    if (g_only && std::strcmp(g_only, #cfg) != 0) break; \
    const Problem p_{__VA_ARGS__};                       \
    report(#cfg, p_, run(cfg, p_, false, true, ++seed), false, true); \
  } while (0)

int main(int argc, char** argv) {
  if (argc > 1) g_include_dir = argv[1];
  bool do_check = argc < 3, do_perf = argc < 3;
  for (int i = 2; i < argc; ++i) {
    do_check |= std::strcmp(argv[i], "check") == 0;
    do_perf |= std::strcmp(argv[i], "perf") == 0;
    if (std::strncmp(argv[i], "only=", 5) == 0) g_only = argv[i] + 5;
    if (std::strncmp(argv[i], "sms=", 4) == 0) g_num_sms_override = std::atoi(argv[i] + 4);
  }
  cudaDeviceProp prop;
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  CUDA_CHECK(cudaFree(nullptr));  // primary context for the driver-API launches
  std::printf("device: %s, %d SMs\n", prop.name, prop.multiProcessorCount);
  CUDA_CHECK(cudaMalloc(&g_flush, kFlushBytes));
  uint64_t seed = 1;
  if (do_check) {
    std::printf("== correctness ==\n");
    for (const auto& s : {Problem{1, 8, 16}, Problem{65, 576, 144}, Problem{129, 2112, 7168}, Problem{4095, 576, 144},
                          Problem{65, 7176, 7296}, Problem{1, 7176, 7296}, Problem{4095, 2112, 7168}}) {
      CHECK_CASE(kC128x128, s);
      CHECK_CASE(kC128x128A2, s);
      CHECK_CASE(kC256x128A2, s);
      CHECK_CASE(kC128x192B2, s);
      CHECK_CASE(kC128x160RowSfa, s);
      CHECK_CASE(kC64x112B2, s);
      CHECK_CASE(kC64x16A2, s);
      CHECK_CASE(kC1D2DFp32, s);
      CHECK_CASE(kC1D1DRowBf16, s);
      CHECK_CASE(kC1D1DAcc, s);
      CHECK_CASE(kC1D1DAcc, Problem{s.m, s.n, s.k, false});
      CHECK_CASE(kC1D1DAccO, Problem{s.m, s.n, s.k, false});
      CHECK_CASE(kC64x112B2O, s);
      CHECK_CASE(kC64x16A2O, s);
      CHECK_CASE(kC256x128A2S4W, s);
      CHECK_CASE(kC256x128A2S4, s);
      CHECK_CASE(kC128x192B2W, s);
      CHECK_CASE(kC1D1DAccS, Problem{s.m, s.n, s.k, false});
    }
    CHECK_CASE(kC256x128A2S4W, 4096, 7168, 16384);
    CHECK_CASE(kC256x128A2, 4096, 7168, 16384);
    CHECK_CASE(kC128x128A2, 8192, 8192, 8192);
  }
  if (do_perf) {
    std::printf("== performance (median of 30, L2 flushed) ==\n");
    PERF_CASE(kC128x128A2, 4096, 7168, 16384);
    PERF_CASE(kC128x128A2O, 4096, 7168, 16384);
    PERF_CASE(kC256x128A2, 4096, 7168, 16384);
    PERF_CASE(kC128x128B2, 8192, 8192, 8192);
    PERF_CASE(kC128x192B2, 8192, 8192, 8192);
    PERF_CASE(kC256x128A2, 8192, 8192, 8192);
    PERF_CASE(kC128x192B2, 4096, 2112, 7168);
    PERF_CASE(kC128x128A2, 4096, 2112, 7168);
    PERF_CASE(kC256x128A2, 4096, 24576, 1536);
    PERF_CASE(kC128x128A2, 4096, 24576, 1536);
    PERF_CASE(kC64x112B2, 128, 7168, 16384);
    PERF_CASE(kC64x112B2O, 128, 7168, 16384);
    PERF_CASE(kC64x16A2, 64, 2112, 7168);
    PERF_CASE(kC64x16A2O, 64, 2112, 7168);
    PERF_CASE(kC1D1DAcc, 4096, 7168, 4096);
    PERF_CASE(kC1D1DAccO, 4096, 7168, 4096);
    PERF_CASE(kC256x128A2W, 4096, 7168, 16384);
    PERF_CASE(kC256x128A2S4, 4096, 7168, 16384);
    PERF_CASE(kC256x128A2S4W, 4096, 7168, 16384);
    PERF_CASE(kC256x128A2S4WB16, 4096, 7168, 16384);
    PERF_CASE(kC256x128A2W, 8192, 8192, 8192);
    PERF_CASE(kC256x128A2S4, 8192, 8192, 8192);
    PERF_CASE(kC256x128A2S4W, 8192, 8192, 8192);
    PERF_CASE(kC128x192B2W, 8192, 8192, 8192);
    PERF_CASE(kC128x192B2W, 4096, 2112, 7168);
    PERF_CASE(kC128x128A2W, 4096, 2112, 7168);
    PERF_CASE(kC256x128A2W, 4096, 24576, 1536);
    PERF_CASE(kC256x128A2S4, 4096, 24576, 1536);
    PERF_CASE(kC256x128A2S4W, 4096, 24576, 1536);
    PERF_CASE(kC128x128A2W, 4096, 7168, 16384);
    PERF_CASE(kC1D1DAccS, 4096, 7168, 4096);
  }
  std::printf("failures: %d\n", g_failures);
  return g_failures ? 1 : 0;
}
