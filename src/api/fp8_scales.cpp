#include "api/fp8_scales.hpp"

#include <string>

#include "api/sm90_launch.hpp"

namespace hopgemm::api {
namespace {

constexpr std::array<int, 3> recipe_triple(device::Sm90Fp8Recipe recipe) {
  return recipe == device::kRecipe1D2D ? std::array<int, 3>{1, 128, 128} : std::array<int, 3>{1, 1, 128};
}

std::string triple_string(const std::array<int, 3>& r) {
  return "(" + std::to_string(r[0]) + ", " + std::to_string(r[1]) + ", " + std::to_string(r[2]) + ")";
}

// A per-row scale tensor into (map, pointer, row stride) for tiles of box_rows rows.
void set_row_scales(device::TmaDescriptor& map, const float*& ptr, int& ld, const RowScales& rs, bool chunked,
                    int box_rows, const char* op) {
  ptr = static_cast<const float*>(rs.sf.data);
  if (rs.by_pointer) {
    ld = static_cast<int>(rs.ld);
    // sf_chunks: a box of 4 k-blocks (16 bytes) of every tile row.
    if (chunked) map = sm90::row_scale_chunk_map(rs.sf, rs.rows, rs.sf_k, rs.ld, device::kSfChunkKBlocks, box_rows, op);
  } else {
    map = sm90::mn_major_scale_map(rs.sf, rs.rows, rs.sf_k, uint32_t(box_rows), op);
  }
}

}  // namespace

device::Sm90Fp8Recipe resolve_recipe(const Validator& v, const std::array<int, 3>& recipe,
                                     device::Sm90Fp8Recipe inferred,
                                     std::initializer_list<device::Sm90Fp8Recipe> supported, const char* scope) {
  if (recipe == std::array<int, 3>{0, 0, 0}) return inferred;
  std::string use;
  for (device::Sm90Fp8Recipe r : supported) {
    if (recipe == recipe_triple(r)) return r;
    use += (use.empty() ? "" : " or ") + triple_string(recipe_triple(r));
  }
  v.unsupported("recipe " + triple_string(recipe) + " is not supported" + scope + " on SM90; use " + use);
}

bool mn_major_tma_aligned(const TensorView& sf, int64_t rows) {
  return (sf.stride(-2) == 1 || rows == 1) && sf.stride(-1) % 4 == 0 && sf.stride(-1) >= rows &&
         reinterpret_cast<uintptr_t>(sf.data) % 16 == 0;
}

SfLayout sf_layout(const Validator& v, const TensorView& sf, const char* arg, int64_t rows, int64_t sf_k,
                   bool allow_mn_major) {
  v.on_device(sf, arg);
  v.dtype(sf, arg, {DType::kFloat32});
  v.rank(sf, arg, {2});
  v.shape(sf, arg, {rows, sf_k});
  const bool row_major = sf.stride(1) == 1 || sf_k == 1;
  if (row_major && (sf.stride(0) >= sf_k || rows == 1)) return SfLayout::kRowMajor;
  if (allow_mn_major && mn_major_tma_aligned(sf, rows)) return SfLayout::kMnMajorTmaAligned;
  v.fail(arg, std::string("must be row-major [") + std::to_string(rows) + ", " + std::to_string(sf_k) + "]" +
                  (allow_mn_major ? " or MN-major TMA-aligned (strides (1, align(" + std::to_string(rows) + ", 4)))"
                                  : "") +
                  ", got strides " + api::stride_string(sf));
}

void set_fp8_scales(device::Sm90Fp8ScaleParams& s, const device::Sm90Fp8GemmConfig& cfg, const RowScales& sfa,
                    const RowScales* sfb_rows, const BlockScales* sfb_blocks, const char* op) {
  set_row_scales(s.tma_sfa, s.sfa, s.sfa_ld, sfa, device::sfa_chunked(cfg), cfg.block_m, op);
  s.sfa_kstride = static_cast<int>(sfa.kstride);
  if (sfb_rows != nullptr) set_row_scales(s.tma_sfb, s.sfb, s.sfb_ld, *sfb_rows, device::sfb_chunked(cfg), cfg.block_n, op);
  if (sfb_blocks != nullptr) {
    s.sfb = static_cast<const float*>(sfb_blocks->data);
    s.sfb_ld = static_cast<int>(sfb_blocks->ld);
    s.sfb_kstride = static_cast<int>(sfb_blocks->kstride);
    s.sfb_group_stride = sfb_blocks->group_stride;
  }
}

}  // namespace hopgemm::api
