#pragma once

#include "sim/metrics/metrics_collector.h"
#include "sim/metrics/run_summary.h"

namespace servesim {

// What a finished run hands to its reporters: the summary and the collector it came from
// (for the per-request and per-iteration records the collector kept).
struct RunResult {
  RunSummary summary;
  MetricsCollector collector;
};

}  // namespace servesim
