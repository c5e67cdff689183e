#pragma once
// The hopgemm command-line tool: one file per subcommand, each exposing `int run_<name>(Args&)`.
#include <string>
#include <vector>

namespace hopgemm::cli {

// Minimal argument reader: flags "--name value" / "--name=value" and positional words.
class Args {
 public:
  Args(int argc, char** argv, int first);
  // Removes and returns the value of --name (or `fallback`).
  std::string take(const std::string& name, const std::string& fallback = "");
  // Every value of a repeatable --name, each split at commas ("--shape A,B --shape C" -> A, B, C).
  std::vector<std::string> take_all(const std::string& name);
  int take_int(const std::string& name, int fallback);
  // The same, refusing a value outside [min, max].
  int take_int(const std::string& name, int fallback, int min, int max);
  bool take_flag(const std::string& name);
  // Removes and returns the next positional word ("" if none).
  std::string next_positional();
  // Throws Error(kInvalidArgument) naming anything not consumed.
  void expect_consumed() const;

 private:
  std::vector<std::string> words_;
  std::vector<bool> used_;
};

// --sfa mn|row (default mn): true when the per-row scale tensors go to the op MN-major TMA-aligned, false for
// row-major as quantised; anything else is an error naming the option.
bool take_sfa_mn_major(Args& args);

int run_info(Args& args);
int run_cache(Args& args);
int run_precompile(Args& args);
int run_bench(Args& args);
int run_tune(Args& args);
int run_explain(Args& args);

}  // namespace hopgemm::cli
