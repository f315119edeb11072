#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/metrics/metrics_collector.h"
#include "sim/metrics/run_summary.h"

namespace servesim {

// What vllm bench serve's --percentile-metrics, --metric-percentiles and --save-detailed
// choose, with vLLM's defaults (ttft,tpot,itl; 99; off).
struct VllmResultOptions {
  std::vector<std::string> metrics = {"ttft", "tpot", "itl"};  // of ttft, tpot, itl, e2el
  std::vector<double> percentiles = {99};                      // in [0, 100]
  bool detailed = false;
};

// The metrics of `vllm bench serve --save-result`, in its key names and units (times in ms,
// duration in s, throughputs per s), from a run's summary and collector:
//   duration, completed, failed (servesim's rejected requests), total_input_tokens,
//   total_output_tokens, request_throughput, request_goodput (null without an SLO),
//   output_throughput, total_token_throughput, max_output_tokens_per_s,
//   max_concurrent_requests, and for each X of options.metrics: mean_X_ms, median_X_ms,
//   std_X_ms and pP_X_ms for each P of options.percentiles. With options.detailed, one entry
//   per request in id order: input_lens, output_lens, ttfts (s), itls (empty lists),
//   latencies (s), start_times (s), generated_texts (empty) and errors ("" or the reason).
// Every value shared with summary.json is that value, times 1000 for milliseconds, so the two
// files agree to the last digit; the others are computed as summary.json's are (exact, the
// ITL percentiles within its histogram's relative error).
// A metric name that is none of the four is an InputError naming `metrics_origin`.
nlohmann::json vllm_bench_result(const RunSummary& summary, const MetricsCollector& collector,
                                 const VllmResultOptions& options,
                                 const std::string& metrics_origin = "--percentile-metrics");

// vLLM's "pP" key word for a percentile: an integer without decimals, else the shortest
// decimal that reads back the same ("99.9").
std::string percentile_key_word(double percentile);

// The most requests in flight at once, over the completed requests' [arrival, completion)
// intervals (a completion before an arrival at the same time), as vLLM's sweep; nothing
// without request records.
std::optional<std::int64_t> max_concurrent_requests(const MetricsCollector& collector);

// vLLM's peak output token throughput: the most tokens emitted in one whole second, counting
// seconds from the first completed request's arrival and each iteration's sampled tokens at
// its end. Nothing without iteration records, or when the iterations' sampled tokens are not
// exactly `output_tokens` (speculative decoding samples positions it then rejects).
std::optional<double> max_output_tokens_per_s(const MetricsCollector& collector,
                                              std::int64_t output_tokens);

}  // namespace servesim
