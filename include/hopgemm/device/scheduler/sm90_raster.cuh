#pragma once
// L2 rasterisation shared by the schedulers: a grid of units_major x units_minor units is walked in bands of `band`
// units along the major axis; inside a band consecutive units walk the band's short side first, so the ~num_sms
// concurrent tiles reuse a few row panels of each operand from L2.

#include "hopgemm/device/common.cuh"

namespace hopgemm::device::scheduler {

struct RasterCoords {
  i32 major, minor;
};

// Unit `index` (< units_major x units_minor) of the banded order. Unsigned: every value is non-negative, and u32
// division is a shorter sequence than i32's.
HOPGEMM_DEVICE RasterCoords banded_coords(u32 index, u32 units_major, u32 units_minor, u32 band) {
  const u32 band_units = band * units_minor;
  const u32 band_index = index / band_units;
  const u32 first = band_index * band;
  const u32 band_size = min(band, units_major - first);
  const u32 in_band = index - band_index * band_units;
  const u32 minor_index = in_band / band_size;
  return RasterCoords{static_cast<i32>(first + (in_band - minor_index * band_size)), static_cast<i32>(minor_index)};
}

}  // namespace hopgemm::device::scheduler
