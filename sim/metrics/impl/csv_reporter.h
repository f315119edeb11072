#pragma once

#include <filesystem>

#include "sim/metrics/metrics_collector.h"
#include "sim/metrics/reporter.h"

namespace servesim {

// requests.csv: one row per completed or rejected request, sorted by id. Columns and cell
// formats are listed in docs/metrics.md. Throws InputError naming `path` on failure.
void write_requests_csv(const MetricsCollector& collector, const std::filesystem::path& path);

// requests.jsonl: requests.csv as JSON lines, one object per request with the same columns
// and values (numbers as the CSV writes them, an empty cell as null), sorted by id.
void write_requests_jsonl(const MetricsCollector& collector, const std::filesystem::path& path);

// iterations.csv: one row per iteration of every replica, by start time, then replica.
void write_iterations_csv(const MetricsCollector& collector, const std::filesystem::path& path);

// Writes requests.csv and iterations.csv, and requests.jsonl when asked for, each only when
// the collector kept those records: a header without rows would read as a run with no requests.
class CsvReporter final : public IReporter {
 public:
  explicit CsvReporter(bool requests_jsonl = false) : requests_jsonl_(requests_jsonl) {}
  void write(const RunResult& result, const std::filesystem::path& out_dir) const override;

 private:
  bool requests_jsonl_;
};

}  // namespace servesim
