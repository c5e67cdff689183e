// Warm-up and kernel-cache archives (include/hopgemm/warmup.hpp, src/jit/cache_archive.hpp); hopgemm.warmup
// (python/hopgemm/_warmup.py) turns its friendlier arguments into these.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <tuple>
#include <vector>

#include "bindings.hpp"
#include "hopgemm/error.hpp"
#include "hopgemm/jit.hpp"
#include "hopgemm/warmup.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace hopgemm::python {
namespace {

WarmupScales scales_from(const std::string& text) {
  if (text == "mn") return WarmupScales::kMnMajor;
  if (text == "row") return WarmupScales::kRowMajor;
  if (text == "both") return WarmupScales::kBoth;
  throw Error(ErrorKind::kInvalidArgument, "warmup: scales must be 'mn', 'row' or 'both', got '" + text + "'");
}

// The GEMMs of a model (a preset name or a config.json path; "" for none) and of `shapes`.
std::vector<WarmupGemm> gemms_of(const std::string& model, bool model_is_file, const std::vector<std::string>& shapes,
                                 int tp, int ep, bool masked_moe) {
  std::vector<WarmupGemm> gemms;
  if (!model.empty()) {
    ModelDeployment deployment;
    deployment.tp = tp;
    deployment.ep = ep;
    deployment.masked_moe = masked_moe;
    gemms = model_gemms(model_is_file ? read_model_config(model) : model_preset(model), deployment);
  }
  for (const auto& shape : shapes) gemms.push_back(parse_warmup_gemm(shape));
  return gemms;
}

}  // namespace

void bind_warmup(nb::module_& m) {
  m.def(
      "warmup_gemms",
      [](const std::string& model, bool model_is_file, const std::vector<std::string>& shapes, int tp, int ep,
         bool masked_moe) {
        std::vector<std::string> out;
        for (const auto& g : gemms_of(model, model_is_file, shapes, tp, ep, masked_moe)) out.push_back(to_string(g));
        return out;
      },
      "model"_a, "model_is_file"_a, "shapes"_a, "tp"_a, "ep"_a, "masked_moe"_a,
      "The warm-up GEMMs of a model and shapes, as '[OP:]MxNxK' strings (* for the token dimension).");
  m.def(
      "warmup",
      [](const std::string& model, bool model_is_file, const std::vector<std::string>& shapes, int tp, int ep,
         bool masked_moe, int64_t max_tokens, const std::string& scales, int num_sms, int jobs, bool progress,
         bool utility_kernels, bool dry_run, const std::string& archive) -> nb::object {
        const std::vector<WarmupGemm> gemms = gemms_of(model, model_is_file, shapes, tp, ep, masked_moe);
        WarmupOptions options;
        options.max_tokens = max_tokens;
        options.scales = scales_from(scales);
        options.num_sms = num_sms;
        options.jobs = jobs;
        options.show_progress = progress;
        options.utility_kernels = utility_kernels;
        options.archive = archive;
        if (dry_run) {
          WarmupPlan plan;
          {
            nb::gil_scoped_release release;
            plan = plan_warmup(gemms, options);
          }
          return nb::cast(std::make_tuple(plan.problems, plan.num_kernels, plan.seconds));
        }
        PrecompileReport report;
        {
          nb::gil_scoped_release release;
          report = warmup(gemms, options);
        }
        return nb::cast(report);
      },
      "model"_a, "model_is_file"_a, "shapes"_a, "tp"_a, "ep"_a, "masked_moe"_a, "max_tokens"_a, "scales"_a,
      "num_sms"_a, "jobs"_a, "progress"_a, "utility_kernels"_a, "dry_run"_a, "archive"_a,
      "Warm-up (hopgemm.warmup): compiles every kernel of the GEMMs for every token count up to max_tokens; "
      "dry_run returns (problems, kernels, seconds) instead.");
  m.def("model_presets", &model_presets, "Names of the embedded model descriptions (hopgemm.warmup(model=...)).");
  m.def(
      "export_cache_archive",
      [](const std::string& path) {
        nb::gil_scoped_release release;
        return export_cache_archive(path).entries;
      },
      "path"_a, "Writes every valid kernel-cache entry into the tar archive `path`; returns how many.");
  m.def(
      "import_cache_archive",
      [](const std::string& path) {
        CacheArchiveReport report;
        {
          nb::gil_scoped_release release;
          report = import_cache_archive(path);
        }
        return std::make_tuple(report.entries, report.already_present, report.skipped);
      },
      "path"_a,
      "Adds the entries of the tar archive `path` to the kernel cache, each checked first; returns (added, "
      "already present, [skipped entry: why, ...]).");
}

}  // namespace hopgemm::python
