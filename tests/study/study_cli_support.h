// Shared by the command-line tests of the studies (sweep, capacity, compare, plot).
#pragma once

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/test_support.h"

namespace servesim::test {

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    lines.push_back(line);
  return lines;
}

// A small sharegpt run, quick enough to sweep.
inline std::vector<std::string> small_sweep(std::vector<std::string> extra) {
  std::vector<std::string> args{"sweep", "--num-requests", "300", "--seed", "7"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

// Sets PATH for the life of the object, so that later tests in the same process see the old one.
class PathOverride {
 public:
  explicit PathOverride(const std::string& path) {
    if (const char* old = std::getenv("PATH")) old_ = old;
    ::setenv("PATH", path.c_str(), 1);
  }
  ~PathOverride() {
    if (old_) ::setenv("PATH", old_->c_str(), 1);
  }
  PathOverride(const PathOverride&) = delete;
  PathOverride& operator=(const PathOverride&) = delete;

 private:
  std::optional<std::string> old_;
};

inline bool gnuplot_installed() {
  return std::system("command -v gnuplot >/dev/null 2>&1") == 0;
}

}  // namespace servesim::test
