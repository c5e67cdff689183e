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

int run_info(Args& args);
int run_cache(Args& args);
int run_precompile(Args& args);
int run_bench(Args& args);
int run_tune(Args& args);

}  // namespace hopgemm::cli
