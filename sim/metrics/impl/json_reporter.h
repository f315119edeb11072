#pragma once

#include "sim/metrics/reporter.h"

namespace servesim {

// Writes summary.json: summary_to_json of the run's summary, indented by two spaces.
class JsonReporter final : public IReporter {
 public:
  void write(const RunResult& result, const std::filesystem::path& out_dir) const override;
};

}  // namespace servesim
