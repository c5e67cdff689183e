#include <algorithm>
#include <string>
#include <vector>

#include "cli.hpp"
#include "hopgemm/error.hpp"

namespace hopgemm::cli {

Args::Args(int argc, char** argv, int first) {
  for (int i = first; i < argc; ++i) {
    std::string word = argv[i];
    const auto eq = word.find('=');
    if (word.rfind("--", 0) == 0 && eq != std::string::npos) {
      words_.push_back(word.substr(0, eq));
      words_.push_back(word.substr(eq + 1));
    } else {
      words_.push_back(std::move(word));
    }
  }
  used_.assign(words_.size(), false);
}

std::string Args::take(const std::string& name, const std::string& fallback) {
  for (size_t i = 0; i < words_.size(); ++i) {
    if (used_[i] || words_[i] != "--" + name) continue;
    if (i + 1 >= words_.size()) throw Error(ErrorKind::kInvalidArgument, "option --" + name + " needs a value");
    used_[i] = used_[i + 1] = true;
    return words_[i + 1];
  }
  return fallback;
}

std::vector<std::string> Args::take_all(const std::string& name) {
  std::vector<std::string> values;
  for (std::string value = take(name); !value.empty(); value = take(name)) {
    for (size_t pos = 0; pos <= value.size();) {
      const size_t comma = std::min(value.find(',', pos), value.size());
      if (comma > pos) values.push_back(value.substr(pos, comma - pos));
      pos = comma + 1;
    }
  }
  return values;
}

int Args::take_int(const std::string& name, int fallback) {
  const std::string value = take(name);
  if (value.empty()) return fallback;
  size_t used = 0;
  int parsed = 0;
  try {
    parsed = std::stoi(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != value.size()) {
    throw Error(ErrorKind::kInvalidArgument, "option --" + name + "='" + value + "' is not an integer");
  }
  return parsed;
}

int Args::take_int(const std::string& name, int fallback, int min, int max) {
  const int value = take_int(name, fallback);
  if (value < min || value > max) {
    throw Error(ErrorKind::kInvalidArgument, "option --" + name + " must be " + std::to_string(min) + " .. " +
                                                 std::to_string(max) + ", got " + std::to_string(value));
  }
  return value;
}

bool Args::take_flag(const std::string& name) {
  for (size_t i = 0; i < words_.size(); ++i) {
    if (!used_[i] && words_[i] == "--" + name) {
      used_[i] = true;
      return true;
    }
  }
  return false;
}

std::string Args::next_positional() {
  for (size_t i = 0; i < words_.size(); ++i) {
    if (!used_[i] && words_[i].rfind("--", 0) != 0) {
      used_[i] = true;
      return words_[i];
    }
  }
  return "";
}

void Args::expect_consumed() const {
  for (size_t i = 0; i < words_.size(); ++i) {
    if (!used_[i]) throw Error(ErrorKind::kInvalidArgument, "unexpected argument '" + words_[i] + "'");
  }
}

bool take_sfa_mn_major(Args& args) {
  const std::string sfa = args.take("sfa", "mn");
  if (sfa != "mn" && sfa != "row") {
    throw Error(ErrorKind::kInvalidArgument, "--sfa must be 'mn' (MN-major TMA-aligned) or 'row', got '" + sfa + "'");
  }
  return sfa == "mn";
}

}  // namespace hopgemm::cli
