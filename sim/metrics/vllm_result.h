#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/metrics/metrics_collector.h"
#include "sim/metrics/run_summary.h"

namespace servesim {

// The metrics of `vllm bench serve --save-result`, in its key names and units (times in ms,
// duration in s, throughputs per s), from a run's summary and collector:
//   duration, completed, failed (servesim's rejected requests), total_input_tokens,
//   total_output_tokens, request_throughput, request_goodput (null without an SLO),
//   output_throughput, total_token_throughput, and for each of ttft, tpot, itl and e2el:
//   mean_X_ms, median_X_ms, std_X_ms and pP_X_ms for P in 90, 95, 99 and `percentiles`.
// Every value shared with summary.json is that value, times 1000 for milliseconds, so the two
// files agree to the last digit; the others are computed as summary.json's are (exact, the
// ITL percentiles within its histogram's relative error).
// `percentiles` are in [0, 100]; P is written as vLLM writes it ("99", "99.9").
nlohmann::json vllm_bench_result(const RunSummary& summary, const MetricsCollector& collector,
                                 const std::vector<double>& percentiles);

// vLLM's "pP" key word for a percentile: an integer without decimals, else the shortest
// decimal that reads back the same ("99.9").
std::string percentile_key_word(double percentile);

}  // namespace servesim
