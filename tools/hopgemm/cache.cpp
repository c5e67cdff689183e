// hopgemm cache ls | verify | clear
#include <cstdio>
#include <string>

#include "cli.hpp"
#include "hopgemm/error.hpp"
#include "hopgemm/jit.hpp"
#include "jit/disk_cache.hpp"

namespace hopgemm::cli {

int run_cache(Args& args) {
  const std::string action = args.next_positional();
  args.expect_consumed();
  if (action == "clear") {
    const int removed = jit::clear_cache();
    std::printf("removed %d entries from %s\n", removed, get_cache_dir().c_str());
    return 0;
  }
  if (action != "ls" && action != "verify") {
    throw Error(ErrorKind::kInvalidArgument, "cache: expected ls, verify or clear, got '" + action + "'");
  }
  const auto entries = jit::list_cache_entries();
  int invalid = 0;
  std::printf("%s: %zu entries\n", get_cache_dir().c_str(), entries.size());
  for (const auto& e : entries) {
    if (!e.valid) ++invalid;
    if (action == "ls") {
      std::printf("%-24s %6lld B  regs %3d  spills %d  %s%s\n", e.family.c_str(), e.cubin_bytes, e.resources.registers,
                  e.resources.spill_store_bytes + e.resources.spill_load_bytes, e.dir.c_str(),
                  e.valid ? "" : ("  INVALID: " + e.problem).c_str());
    } else if (!e.valid) {
      std::printf("INVALID %s: %s\n", e.dir.c_str(), e.problem.c_str());
    }
  }
  if (action == "verify") {
    std::printf("%zu valid, %d invalid (invalid entries are rebuilt on next use)\n", entries.size() - invalid, invalid);
    return invalid == 0 ? 0 : 1;
  }
  return 0;
}

}  // namespace hopgemm::cli
