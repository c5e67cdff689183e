#pragma once
// hopgemm: FP8 and BF16 GEMMs (dense and MoE grouped; FP8 with DeepSeek's fine-grained scaling) and the
// DeepSeek-V3.2 indexer kernels for NVIDIA Hopper (SM90), compiled at run time.
#include "hopgemm/bf16_gemm.hpp"
#include "hopgemm/einsum.hpp"
#include "hopgemm/error.hpp"
#include "hopgemm/gemm.hpp"
#include "hopgemm/hc_prenorm.hpp"
#include "hopgemm/grouped_gemm.hpp"
#include "hopgemm/jit.hpp"
#include "hopgemm/layout.hpp"
#include "hopgemm/mqa_logits.hpp"
#include "hopgemm/quantize.hpp"
#include "hopgemm/runtime.hpp"
#include "hopgemm/tensor.hpp"
#include "hopgemm/tuning.hpp"
#include "hopgemm/warmup.hpp"
