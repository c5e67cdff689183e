#pragma once
// The FP8 family's scale policy (recipes 1D2D and 1D1D): what the shared collectives are instantiated with beside the
// operand policy (collective/sm90_gemm_traits.cuh lists a scale policy's members). Its facts and shared memory:
// sm90_fp8_scale_facts.cuh; its producer side: sm90_fp8_scale_loader.cuh; its math threads' side and the promotion:
// sm90_fp8_scale_reader.cuh.

#include "hopgemm/device/collective/sm90_fp8_scale_facts.cuh"
#include "hopgemm/device/collective/sm90_fp8_scale_loader.cuh"
#include "hopgemm/device/collective/sm90_fp8_scale_reader.cuh"

namespace hopgemm::device::collective {

template <Sm90Fp8GemmConfig kConfig>
struct Sm90Fp8Scales : Sm90Fp8ScaleFacts<kConfig> {
  using Loader = Sm90Fp8ScaleLoader<kConfig>;
  using Reader = Sm90Fp8ScaleReader<kConfig>;
};

}  // namespace hopgemm::device::collective
