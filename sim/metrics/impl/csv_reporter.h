#pragma once

#include <filesystem>

#include "sim/metrics/metrics_collector.h"
#include "sim/metrics/reporter.h"

namespace servesim {

// requests.csv: one row per completed or rejected request, sorted by id. Columns and cell
// formats are listed in docs/metrics.md. Throws InputError naming `path` on failure.
void write_requests_csv(const MetricsCollector& collector, const std::filesystem::path& path);

// iterations.csv: one row per iteration of every replica, by start time, then replica.
void write_iterations_csv(const MetricsCollector& collector, const std::filesystem::path& path);

// Writes requests.csv and iterations.csv, each only when the collector kept those records:
// a header without rows would read as a run with no requests.
class CsvReporter final : public IReporter {
 public:
  void write(const RunResult& result, const std::filesystem::path& out_dir) const override;
};

}  // namespace servesim
