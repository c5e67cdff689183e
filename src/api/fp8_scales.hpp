#pragma once
// The FP8 family's recipes and scale factors on the host, for every FP8 op (dense and grouped): the one recipe
// resolver, the one reading of a scale tensor's layout, and the scale part of the kernel parameters.
#include <array>
#include <cstdint>
#include <initializer_list>

#include "api/validate.hpp"
#include "hopgemm/device/kernels/sm90_fp8_gemm_types.cuh"
#include "hopgemm/tensor.hpp"

namespace hopgemm::api {

// The recipe of an FP8 op: `recipe` as given ((1, 128, 128): 1D2D, (1, 1, 128): 1D1D; (0, 0, 0): not given, then
// `inferred`), one of `supported`; else Error(kUnsupported) "recipe (..) is not supported<scope> on SM90; use ..".
device::Sm90Fp8Recipe resolve_recipe(const Validator& v, const std::array<int, 3>& recipe,
                                     device::Sm90Fp8Recipe inferred,
                                     std::initializer_list<device::Sm90Fp8Recipe> supported, const char* scope = "");

// How a scale-factor tensor [rows, sf_k] is laid out; the kernels read either form directly.
enum class SfLayout { kRowMajor, kMnMajorTmaAligned };
// Whether the last two dimensions of `sf` ([rows, sf_k]) are MN-major TMA-aligned, as get_mn_major_tma_aligned_tensor
// returns them: strides (1, s) with s a multiple of 4 and >= rows, and a 16-byte aligned base.
bool mn_major_tma_aligned(const TensorView& sf, int64_t rows);
// The layout of `sf` (FP32 [rows, sf_k] on the device), or a failure naming `arg` (MN-major only where allowed).
SfLayout sf_layout(const Validator& v, const TensorView& sf, const char* arg, int64_t rows, int64_t sf_k,
                   bool allow_mn_major);

// A per-row scale tensor as a kernel reads it: [rows, sf_k] FP32, read by pointer (`by_pointer`: element (r, kb) at
// r * ld + kb * kstride; row-major, or MN-major read by the staging warps) or MN-major TMA-aligned by TMA.
struct RowScales {
  TensorView sf;
  int64_t rows = 0, sf_k = 0;
  bool by_pointer = true;
  int64_t ld = 0, kstride = 1;
};
// 1D2D block scales [ceil(N/128), ceil(K/128)] per group: element (r, kb) of group g at
// g * group_stride + r * ld + kb * kstride.
struct BlockScales {
  const void* data = nullptr;
  int64_t ld = 0, kstride = 1, group_stride = 0;
};
// The scale factors of `cfg`'s parameters: sfa per row; sfb per row (1D1D) or per block (1D2D). Row-major per-row
// scales are read by pointer, or by TMA in chunks where the config says so (sf_chunks); MN-major ones by TMA.
void set_fp8_scales(device::Sm90Fp8ScaleParams& s, const device::Sm90Fp8GemmConfig& cfg, const RowScales& sfa,
                    const RowScales* sfb_rows, const BlockScales* sfb_blocks, const char* op);

}  // namespace hopgemm::api
