#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "sim/metrics/reporter.h"
#include "sim/metrics/run_summary.h"

namespace servesim {

// The summary for people, laid out as vLLM's benchmark result block ("==== Serving Benchmark
// Result ===="): counts, throughputs, then mean, median, std, p90, p95, p99 and max of TTFT,
// TPOT, ITL and E2E latency in milliseconds, then servesim's own figures (SLO attainment,
// batching, KV memory in percent), and why requests were rejected (count and reason, as
// MetricsCollector::rejections_by_reason). Scripts should read summary.json.
using RejectionCounts = std::vector<std::pair<std::string, std::int64_t>>;
void print_summary(std::ostream& out, const RunSummary& summary,
                   const RejectionCounts& rejections = {});

// Prints the summary to a stream (usually standard output) instead of writing files, so the
// console output can be chosen like any other reporter.
class ConsoleReporter final : public IReporter {
 public:
  // `out` must outlive the reporter.
  explicit ConsoleReporter(std::ostream& out) : out_(&out) {}
  // `out_dir` is unused: nothing is written to files.
  void write(const RunResult& result, const std::filesystem::path& out_dir) const override;

 private:
  std::ostream* out_;
};

}  // namespace servesim
