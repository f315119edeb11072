#pragma once

#include <filesystem>

#include "sim/metrics/run_result.h"

namespace servesim {

// Writes a run's results in one format. Reporters only read the result: several can be run
// on the same result in any order. Files go into `out_dir`, which is created when missing;
// files of the same name are replaced. Output is deterministic: the same result gives
// byte-identical files. Throws InputError naming the path when a file cannot be written.
class IReporter {
 public:
  virtual ~IReporter() = default;
  virtual void write(const RunResult& result, const std::filesystem::path& out_dir) const = 0;

 protected:
  IReporter() = default;
  IReporter(const IReporter&) = default;
  IReporter& operator=(const IReporter&) = default;
};

}  // namespace servesim
