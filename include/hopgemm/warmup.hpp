#pragma once
// Warm-up: every kernel a workload can select, compiled ahead of time into the kernel cache, in parallel and without
// a GPU. A workload is a list of GEMMs whose token count varies (a server's batch, an MoE layer's routed rows): for
// each, warm-up asks the heuristics which kernel each possible size selects, from 1 to `max_tokens`, keeps the
// distinct ones and compiles those. After it, a process with HOPGEMM_JIT_POLICY=error_on_miss (set_jit_policy) runs
// the workload without compiling, and CUDA-graph capture finds every kernel loaded or on disk.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "hopgemm/grouped_gemm.hpp"
#include "hopgemm/jit.hpp"

namespace hopgemm {

// The op a warm-up GEMM stands for.
enum class WarmupOp {
  kGemm,                // fp8_gemm_{nt,nn,tn,tt}, 1D2D (per-token x per-block scales), BF16 D: forward and dgrad
  kWgrad,               // fp8_gemm_* 1D1D (per-token x per-channel scales), FP32 D += A B^T: weight gradients
  kMGroupedContiguous,  // m_grouped_fp8_gemm_{nt,nn}_contiguous: `groups` experts' rows stacked
  kMGroupedMasked,      // m_grouped_fp8_gemm_nt_masked
  kKGrouped,            // k_grouped_fp8_gemm_nt_contiguous: MoE weight gradients
};
const char* warmup_op_name(WarmupOp op);  // "gemm", "wgrad", "m-grouped", "masked", "k-grouped"

// One GEMM of the workload: D [M, N] (+)= A [M, K] B [N, K]^T, per group for the grouped ops. The dimension that
// carries tokens may be 0, meaning "every value from 1 to WarmupOptions::max_tokens": M for kGemm, K for kWgrad (the
// tokens are the reduction), the total rows M_sum for kMGroupedContiguous, the expected rows per group for
// kMGroupedMasked, the total K of the groups for kKGrouped (each group's K a multiple of 128).
struct WarmupGemm {
  WarmupOp op = WarmupOp::kGemm;
  int64_t m = 0, n = 0, k = 0;
  int64_t groups = 1;  // experts, for the grouped ops
  ContiguousLayout layout = ContiguousLayout::kGroupIds;  // kMGroupedContiguous: kPsum and kPacked share kernels
};
// "[OP:]MxNxK" or, for the grouped ops, "OP:GxMxNxK" with OP gemm (default), wgrad, m-grouped, m-grouped-psum,
// masked or k-grouped, and a 0 or "*" for the dimension that carries tokens (e.g. "*x7168x2048",
// "m-grouped:32x*x4096x7168"). Throws Error(kInvalidArgument) saying what is wrong.
WarmupGemm parse_warmup_gemm(const std::string& text);
std::string to_string(const WarmupGemm& gemm);

// A model's FP8 linear layers, as a Hugging Face config.json describes them. Attention is MLA (DeepSeek-V2/V3)
// where kv_lora_rank > 0, else grouped-query attention; the MLP is dense (intermediate_size) in the first
// `first_dense_layers` layers (all of them without experts), else `num_experts` routed experts of
// moe_intermediate_size (plus `num_shared_experts` shared ones run as one dense MLP).
struct ModelShape {
  std::string name;
  int64_t hidden_size = 0;
  int64_t intermediate_size = 0;
  int64_t num_attention_heads = 0, num_key_value_heads = 0, head_dim = 0;
  int64_t q_lora_rank = 0, kv_lora_rank = 0, qk_nope_head_dim = 0, qk_rope_head_dim = 0, v_head_dim = 0;
  int64_t num_experts = 0, num_experts_per_tok = 0, moe_intermediate_size = 0, num_shared_experts = 0;
  int64_t first_dense_layers = 0;
};
// The embedded models: "deepseek-v3" (also R1 and V3.1: the same linear layers) and "qwen3-235b-a22b".
std::vector<std::string> model_presets();
ModelShape model_preset(const std::string& name);
// The fields above read from a Hugging Face config.json (hidden_size, n_routed_experts or num_experts, ...).
ModelShape read_model_config(const std::string& path);

// How the model is served: tensor-parallel and expert-parallel degrees (experts split over `ep` ranks; with ep 1 each
// expert's intermediate dimension is split over `tp`), and whether the MoE layers run with the masked layout (decode
// under CUDA graphs, DeepEP low latency) as well as the contiguous one (prefill).
struct ModelDeployment {
  int tp = 1, ep = 1;
  bool masked_moe = true;
};
// The model's FP8 GEMMs on one rank: attention projections, dense and shared-expert MLPs, the routed experts'
// grouped GEMMs, each with its token dimension left to vary (0). The language-model head and the attention itself
// are not FP8 GEMMs.
std::vector<WarmupGemm> model_gemms(const ModelShape& model, const ModelDeployment& deployment);

// The per-token A scales the caller passes (and B's, for the 1D1D weight gradients): MN-major TMA-aligned
// (get_mn_major_tma_aligned_tensor, DeepGEMM's layout) or row-major as the quantisers return them. The two select
// different kernels.
enum class WarmupScales { kMnMajor, kRowMajor, kBoth };

struct WarmupOptions {
  int64_t max_tokens = 8192;  // the largest value a 0 dimension takes (a rank's most tokens in one call)
  int num_sms = 0;            // SMs the kernels are chosen for: 0 = the current GPU's, or 132 (H100/H200 SXM) without one
  int jobs = 0;               // compiler threads; 0 = one per core
  WarmupScales scales = WarmupScales::kMnMajor;
  // Also the 15 scale-layout and quantisation kernels (per_token_cast_to_fp8, get_mn_major_tma_aligned_tensor, ...):
  // their sizes are run-time parameters, so one fixed set serves every shape.
  bool utility_kernels = true;
  // A progress bar redrawn on stderr (a line per tenth of the work where stderr is not a terminal).
  bool show_progress = false;
  // Or a function called after each kernel instead (from worker threads, serialised): kernels done, in the set.
  std::function<void(int, int)> progress;
  // Also write the set's cache entries into this tar archive (export_cache_archive); "" for none.
  std::string archive;
  // Where a GPU is present, also load the GEMM kernels into this process (report.num_loaded), so that a CUDA-graph
  // capture, which refuses to load a kernel, finds them. The layout and quantisation kernels load on first use.
  bool load = true;
};

struct WarmupPlan {
  int64_t problems = 0;       // distinct problems (shape classes the heuristics saw)
  int num_kernels = 0;        // distinct kernels they select
  double seconds = 0.0;       // time to compute the plan
};
// The distinct kernels `gemms` select, without compiling them.
WarmupPlan plan_warmup(const std::vector<WarmupGemm>& gemms, const WarmupOptions& options = {});
// Compiles (or finds in the disk cache) every kernel `gemms` select. report.seconds includes the planning.
PrecompileReport warmup(const std::vector<WarmupGemm>& gemms, const WarmupOptions& options = {});

}  // namespace hopgemm
