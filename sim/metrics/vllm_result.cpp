#include "sim/metrics/vllm_result.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <limits>
#include <utility>

#include "sim/core/error.h"

namespace servesim {
namespace {

constexpr double kMsPerS = 1000;

const RequestRecord* first_completed(const std::vector<RequestRecord>& records) {
  const RequestRecord* first = nullptr;
  for (const RequestRecord& r : records) {
    if (!r.rejected && (first == nullptr || r.arrival_s < first->arrival_s)) first = &r;
  }
  return first;
}

// --save-detailed's per-request lists, in id order.
void add_detailed(nlohmann::json& j, const MetricsCollector& collector) {
  if (!collector.options().keep_request_records) {
    throw InputError("--save-detailed", "needs request records (output.request_records: true)");
  }
  std::vector<const RequestRecord*> records;
  for (const RequestRecord& r : collector.request_records())
    records.push_back(&r);
  std::sort(records.begin(), records.end(),
            [](const RequestRecord* a, const RequestRecord* b) { return a->id < b->id; });
  nlohmann::json input_lens = nlohmann::json::array(), output_lens = nlohmann::json::array(),
                 ttfts = nlohmann::json::array(), itls = nlohmann::json::array(),
                 latencies = nlohmann::json::array(), start_times = nlohmann::json::array(),
                 texts = nlohmann::json::array(), errors = nlohmann::json::array();
  for (const RequestRecord* r : records) {
    input_lens.push_back(r->prompt_tokens);
    // vLLM's failed requests have no output, TTFT or latency: 0.
    output_lens.push_back(r->rejected ? 0 : r->output_tokens);
    ttfts.push_back(r->rejected ? 0.0 : r->first_token_s - r->arrival_s);
    itls.push_back(nlohmann::json::array());
    latencies.push_back(r->rejected ? 0.0 : r->completion_s - r->arrival_s);
    start_times.push_back(r->arrival_s);
    texts.push_back("");
    errors.push_back(r->rejected ? r->reject_reason : "");
  }
  j["input_lens"] = std::move(input_lens);
  j["output_lens"] = std::move(output_lens);
  j["ttfts"] = std::move(ttfts);
  j["itls"] = std::move(itls);
  j["latencies"] = std::move(latencies);
  j["start_times"] = std::move(start_times);
  j["generated_texts"] = std::move(texts);
  j["errors"] = std::move(errors);
}

}  // namespace

std::string percentile_key_word(double percentile) {
  if (percentile == std::floor(percentile)) {
    return std::to_string(static_cast<long long>(percentile));
  }
  std::array<char, 32> buffer{};
  const auto result = std::to_chars(buffer.data(), buffer.data() + buffer.size(), percentile);
  return std::string(buffer.data(), result.ptr);
}

std::optional<std::int64_t> max_concurrent_requests(const MetricsCollector& collector) {
  if (!collector.options().keep_request_records) return std::nullopt;
  std::vector<std::pair<double, int>> events;
  for (const RequestRecord& r : collector.request_records()) {
    if (r.rejected) continue;
    events.emplace_back(r.arrival_s, 1);
    events.emplace_back(r.completion_s, -1);
  }
  std::sort(events.begin(), events.end());  // at a tie, -1 (a completion) first
  std::int64_t now = 0;
  std::int64_t peak = 0;
  for (const auto& [time, delta] : events) {
    now += delta;
    peak = std::max(peak, now);
  }
  return peak;
}

std::optional<double> max_output_tokens_per_s(const MetricsCollector& collector,
                                              std::int64_t output_tokens) {
  if (!collector.options().keep_iteration_records || !collector.options().keep_request_records) {
    return std::nullopt;
  }
  const RequestRecord* first = first_completed(collector.request_records());
  if (first == nullptr) return 0.0;
  std::vector<std::int64_t> tokens_in_second;
  std::int64_t sampled = 0;
  for (const IterationRecord& it : collector.iteration_records()) {
    if (it.sampled_sequences == 0) continue;
    const double since_first_s = it.start_s + it.duration_s - first->arrival_s;
    if (since_first_s < 0) return std::nullopt;  // not a completed request's token
    const auto second = static_cast<std::size_t>(since_first_s);
    if (second >= tokens_in_second.size()) tokens_in_second.resize(second + 1, 0);
    tokens_in_second[second] += it.sampled_sequences;
    sampled += it.sampled_sequences;
  }
  if (sampled != output_tokens) return std::nullopt;
  const auto peak = std::max_element(tokens_in_second.begin(), tokens_in_second.end());
  return peak == tokens_in_second.end() ? 0.0 : static_cast<double>(*peak);
}

nlohmann::json vllm_bench_result(const RunSummary& s, const MetricsCollector& collector,
                                 const VllmResultOptions& options,
                                 const std::string& metrics_origin) {
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
  const auto peak_tokens = max_output_tokens_per_s(collector, s.output_tokens);
  j["max_output_tokens_per_s"] = peak_tokens ? nlohmann::json(*peak_tokens) : nlohmann::json();
  const auto peak_requests = max_concurrent_requests(collector);
  j["max_concurrent_requests"] = peak_requests ? nlohmann::json(*peak_requests) : nlohmann::json();
  if (options.detailed) add_detailed(j, collector);

  using Latency = MetricsCollector::Latency;
  const struct {
    const char* name;
    const LatencyStats& stats;
    Latency latency;
  } metrics[] = {{"ttft", s.ttft_s, Latency::Ttft},
                 {"tpot", s.tpot_s, Latency::Tpot},
                 {"itl", s.itl_s, Latency::Itl},
                 {"e2el", s.e2e_s, Latency::E2e}};
  // The percentiles summary.json has are its values; the others are computed as it computes
  // its own.
  std::vector<double> extra_q;
  for (double p : options.percentiles) {
    if (p != 50 && p != 90 && p != 95 && p != 99) extra_q.push_back(p / 100);
  }
  for (const std::string& name : options.metrics) {
    const auto* m = std::find_if(std::begin(metrics), std::end(metrics),
                                 [&name](const auto& metric) { return name == metric.name; });
    if (m == std::end(metrics)) {
      throw InputError(metrics_origin, "unknown metric \"" + name +
                                           "\" (expected a comma-separated list of ttft, tpot, "
                                           "itl and e2el)");
    }
    j["mean_" + name + "_ms"] = m->stats.mean * kMsPerS;
    j["median_" + name + "_ms"] = m->stats.p50 * kMsPerS;
    j["std_" + name + "_ms"] = m->stats.stddev * kMsPerS;
    const std::vector<double> values = collector.latency_quantiles(m->latency, extra_q);
    std::size_t next_extra = 0;
    for (double p : options.percentiles) {
      double value = 0;
      if (p == 50) {
        value = m->stats.p50;
      } else if (p == 90) {
        value = m->stats.p90;
      } else if (p == 95) {
        value = m->stats.p95;
      } else if (p == 99) {
        value = m->stats.p99;
      } else {
        value = values[next_extra++];
      }
      j["p" + percentile_key_word(p) + "_" + name + "_ms"] = value * kMsPerS;
    }
  }
  return j;
}

}  // namespace servesim
