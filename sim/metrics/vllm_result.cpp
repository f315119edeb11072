#include "sim/metrics/vllm_result.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>

namespace servesim {
namespace {

constexpr double kMsPerS = 1000;

}  // namespace

std::string percentile_key_word(double percentile) {
  if (percentile == std::floor(percentile)) {
    return std::to_string(static_cast<long long>(percentile));
  }
  std::array<char, 32> buffer{};
  const auto result = std::to_chars(buffer.data(), buffer.data() + buffer.size(), percentile);
  return std::string(buffer.data(), result.ptr);
}

nlohmann::json vllm_bench_result(const RunSummary& s, const MetricsCollector& collector,
                                 const std::vector<double>& percentiles) {
  nlohmann::json j;
  j["duration"] = s.duration_s;
  j["completed"] = s.requests_completed;
  j["failed"] = s.requests_rejected;
  j["total_input_tokens"] = s.prompt_tokens;
  j["total_output_tokens"] = s.output_tokens;
  j["request_throughput"] = s.throughput_requests_per_s;
  j["request_goodput"] =
      s.goodput_requests_per_s ? nlohmann::json(*s.goodput_requests_per_s) : nlohmann::json();
  j["output_throughput"] = s.throughput_output_tokens_per_s;
  j["total_token_throughput"] = s.throughput_total_tokens_per_s;

  // The percentiles beyond summary.json's, computed as it computes its own.
  std::vector<double> extra;
  for (double p : percentiles) {
    if (p != 90 && p != 95 && p != 99 && std::find(extra.begin(), extra.end(), p) == extra.end()) {
      extra.push_back(p);
    }
  }
  std::vector<double> extra_q;
  for (double p : extra)
    extra_q.push_back(p / 100);
  using Latency = MetricsCollector::Latency;
  const struct {
    const char* name;
    const LatencyStats& stats;
    Latency latency;
  } metrics[] = {{"ttft", s.ttft_s, Latency::Ttft},
                 {"tpot", s.tpot_s, Latency::Tpot},
                 {"itl", s.itl_s, Latency::Itl},
                 {"e2el", s.e2e_s, Latency::E2e}};
  for (const auto& m : metrics) {
    const std::string name = m.name;
    j["mean_" + name + "_ms"] = m.stats.mean * kMsPerS;
    j["median_" + name + "_ms"] = m.stats.p50 * kMsPerS;
    j["std_" + name + "_ms"] = m.stats.stddev * kMsPerS;
    j["p90_" + name + "_ms"] = m.stats.p90 * kMsPerS;
    j["p95_" + name + "_ms"] = m.stats.p95 * kMsPerS;
    j["p99_" + name + "_ms"] = m.stats.p99 * kMsPerS;
    const std::vector<double> values = collector.latency_quantiles(m.latency, extra_q);
    for (std::size_t i = 0; i < extra.size(); ++i) {
      j["p" + percentile_key_word(extra[i]) + "_" + name + "_ms"] = values[i] * kMsPerS;
    }
  }
  return j;
}

}  // namespace servesim
