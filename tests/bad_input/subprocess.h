#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace servesim::test {

struct ProcessResult {
  int exit_code = -1;      // when it exited normally
  int signal = 0;          // the signal that killed it (a crash), else 0
  bool timed_out = false;  // killed by the time limit
  std::string out;
  std::string err;
};

// Runs `executable args...` in `working_dir` with stdin closed, capturing stdout and stderr,
// and kills it after `limit_s` seconds.
ProcessResult run_executable(const std::filesystem::path& executable,
                             const std::vector<std::string>& args,
                             const std::filesystem::path& working_dir, unsigned limit_s);

}  // namespace servesim::test
