#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>

#include "sim/metrics/error_bands.h"

namespace servesim {

// The end-to-end figures a measured serving point may hold and a prediction gives, in the
// units of the measured files (docs/validation.md): latencies in milliseconds, throughputs in
// tokens per second.
enum class ServingMetric {
  TtftMs,                  // mean time to first token
  ItlMs,                   // (E2E - TTFT) summed over requests / (output tokens - 1) summed
  TpotMs,                  // mean over requests of (E2E - TTFT) / (output tokens - 1) (vLLM's)
  E2eMs,                   // mean end-to-end latency
  OutputTokensPerS,        // output tokens of the stage's requests / (last finish - stage start)
  OutputTokensPerSPerGpu,  // static batches: output tokens / makespan / (tp x pp)
  TotalTokensPerS,         // burst: prompt + output tokens / makespan
  CompletedShare,          // the stage's requests finished / sent
};

inline constexpr std::size_t kServingMetricCount = 8;

// Column names, as the measured files and the CSV report spell them, in enum order.
inline constexpr std::array<std::string_view, kServingMetricCount> kServingMetricNames{
    "ttft_ms_mean",       "itl_ms_mean",         "tpot_ms_mean",
    "e2e_ms_mean",        "output_tokens_per_s", "output_tokens_per_s_per_gpu",
    "total_tokens_per_s", "completed_share"};

inline constexpr std::string_view serving_metric_name(ServingMetric metric) {
  return kServingMetricNames[static_cast<std::size_t>(metric)];
}

// Measured or predicted figures of one point; a figure the point does not have is empty.
struct ServingMetrics {
  std::array<std::optional<double>, kServingMetricCount> values{};
  // Measured: fewer than kOverloadedCompletedShare of the requests sent completed, or a mean
  // TTFT over kOverloadedTtftS. Predicted: see serving_prediction.h.
  bool overloaded = false;
  // Predicted only, for the error bands (sim/metrics/error_bands.h): the mean number of the
  // point's requests in flight (Little's law: their summed E2E over the span from the point's
  // start to the last one's completion), and the class of the deployment that served them.
  double in_flight_requests = 0;
  DeploymentClass deployment;

  std::optional<double>& operator[](ServingMetric m) { return values[static_cast<std::size_t>(m)]; }
  const std::optional<double>& operator[](ServingMetric m) const {
    return values[static_cast<std::size_t>(m)];
  }
};

// A stage is overloaded when fewer than this share of the requests it sent finished (the
// measured files: requests_completed / requests_sent; a prediction: finished by the end of the
// stage), or when its mean TTFT exceeds kOverloadedTtftS: a server that
// keeps up with its load finishes nearly everything it is sent within the stage and starts
// every request within a few hundred milliseconds.
inline constexpr double kOverloadedCompletedShare = 0.9;
inline constexpr double kOverloadedTtftS = 10.0;

}  // namespace servesim
