#include "sim/metrics/metrics_collector.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <string_view>

#include "sim/core/error.h"

namespace servesim {
namespace {

void check_slo(const std::optional<double>& slo_s, const char* name) {
  if (slo_s && !(std::isfinite(*slo_s) && *slo_s >= 0)) {
    throw InputError(name,
                     "must be a finite number of seconds >= 0, got " + std::to_string(*slo_s));
  }
}

void check_request(const RequestRecord& r, bool rejected) {
  const std::string who = "request " + std::to_string(r.id) + ": ";
  if (r.rejected != rejected) {
    throw InvariantError(who + (rejected ? "reported as rejected but not marked rejected"
                                         : "reported as finished but marked rejected"));
  }
  if (!std::isfinite(r.arrival_s)) throw InvariantError(who + "arrival time is not finite");
  if (r.prompt_tokens < 0 || r.output_tokens < 0 || r.cut_output_tokens < 0 || r.preemptions < 0) {
    throw InvariantError(who + "negative token or preemption count");
  }
  if (rejected) {
    if (r.cut_output_tokens != 0) throw InvariantError(who + "rejected with its output cut");
    return;
  }
  if (r.output_tokens < 1) throw InvariantError(who + "finished without an output token");
  // Also rejects NaN, since every comparison with NaN is false.
  if (!(r.arrival_s <= r.first_scheduled_s && r.first_scheduled_s <= r.first_token_s &&
        r.first_token_s <= r.completion_s && std::isfinite(r.completion_s))) {
    throw InvariantError(who +
                         "times must satisfy arrival <= first scheduled <= first token <= "
                         "completion, all finite");
  }
}

// The reason without its first parenthesised whole number, the rejected request's own figure.
std::string reason_class(const std::string& reason) {
  for (std::size_t open = reason.find(" ("); open != std::string::npos;
       open = reason.find(" (", open + 1)) {
    const std::size_t close = reason.find(')', open);
    if (close == std::string::npos) break;
    const auto digits = std::string_view(reason).substr(open + 2, close - open - 2);
    if (!digits.empty() &&
        std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return reason.substr(0, open) + reason.substr(close + 1);
    }
  }
  return reason;
}

}  // namespace

MetricsCollector::MetricsCollector(MetricsOptions options)
    : options_(options),
      ttft_s_(options.exact_latency_limit, options.latency_relative_error),
      tpot_s_(options.exact_latency_limit, options.latency_relative_error),
      e2e_s_(options.exact_latency_limit, options.latency_relative_error),
      normalized_s_per_token_(options.exact_latency_limit, options.latency_relative_error) {
  static_cast<void>(LogHistogram(options_.itl_relative_error));  // throws when out of range
  check_slo(options_.slo_ttft_s, "slo_ttft_s");
  check_slo(options_.slo_tpot_s, "slo_tpot_s");
  check_slo(options_.slo_e2e_s, "slo_e2e_s");
}

bool MetricsCollector::meets_slo(double ttft_s, std::optional<double> tpot_s,
                                 double e2e_s) const noexcept {
  const bool ttft_ok = !options_.slo_ttft_s || ttft_s <= *options_.slo_ttft_s;
  // A single-token request has no TPOT, so it cannot miss a TPOT target (vLLM's goodput
  // counts its TPOT as 0).
  const bool tpot_ok = !options_.slo_tpot_s || !tpot_s || *tpot_s <= *options_.slo_tpot_s;
  const bool e2e_ok = !options_.slo_e2e_s || e2e_s <= *options_.slo_e2e_s;
  return ttft_ok && tpot_ok && e2e_ok;
}

void MetricsCollector::on_request_finished(const RequestRecord& record) {
  check_request(record, false);
  const double ttft_s = record.first_token_s - record.arrival_s;
  const double e2e_s = record.completion_s - record.arrival_s;
  std::optional<double> tpot_s;
  // TPOT averages the gaps after the first token (vLLM's benchmark), so a request with one
  // output token has none and is left out rather than counted as 0.
  if (record.output_tokens > 1) {
    tpot_s = (record.completion_s - record.first_token_s) /
             static_cast<double>(record.output_tokens - 1);
    tpot_s_.add(*tpot_s);
  }
  ttft_s_.add(ttft_s);
  e2e_s_.add(e2e_s);
  normalized_s_per_token_.add(e2e_s / static_cast<double>(record.output_tokens));
  prompt_tokens_ += record.prompt_tokens;
  cached_prompt_tokens_ += record.cached_tokens;
  host_cached_prompt_tokens_ += record.host_cached_tokens;
  output_tokens_ += record.output_tokens;
  preemptions_ += record.preemptions;
  if (record.cut_output_tokens > 0) {
    ++requests_output_cut_;
    cut_output_tokens_ += record.cut_output_tokens;
  }
  if (meets_slo(ttft_s, tpot_s, e2e_s)) ++slo_met_;
  if (options_.keep_request_timings) {
    request_times_.push_back({record.arrival_s, record.first_scheduled_s, record.completion_s,
                              record.prompt_tokens, record.output_tokens});
  }
  pass_request(record);
}

void MetricsCollector::pass_request(const RequestRecord& record) {
  if (options_.keep_request_records) requests_.push_back(record);
  if (sink_ == nullptr) return;
  const auto parts = ttft_parts_.find(record.id);
  sink_->on_request(record, parts == ttft_parts_.end() ? nullptr : &parts->second);
  if (!options_.keep_request_records && parts != ttft_parts_.end()) ttft_parts_.erase(parts);
}

void MetricsCollector::on_request_rejected(const RequestRecord& record) {
  check_request(record, true);
  ++requests_rejected_;
  const std::string reason = reason_class(record.reject_reason);
  const auto counted = std::find_if(rejections_by_reason_.begin(), rejections_by_reason_.end(),
                                    [&](const auto& entry) { return entry.first == reason; });
  if (counted == rejections_by_reason_.end()) {
    rejections_by_reason_.emplace_back(reason, 1);
  } else {
    ++counted->second;
  }
  if (options_.keep_request_timings) {
    request_times_.push_back(
        {record.arrival_s, std::nan(""), std::nan(""), record.prompt_tokens, record.output_tokens});
  }
  pass_request(record);
}

MetricsCollector::ReplicaSums& MetricsCollector::add_replica_sums(std::int32_t replica) {
  if (replica < 0) {
    throw InvariantError("replica index must be >= 0, got " + std::to_string(replica));
  }
  const auto index = static_cast<std::size_t>(replica);
  while (replicas_.size() <= index)
    replicas_.emplace_back(options_.itl_relative_error);
  return replicas_[index];
}

void MetricsCollector::gap_broken(double gap_s) {
  throw InvariantError("token gap must be finite and >= 0, got " + std::to_string(gap_s));
}

void MetricsCollector::on_token_gaps(std::int32_t replica, double gap_s, std::int64_t count) {
  check_gap(gap_s);
  replica_sums(replica).itl.add(gap_s, count);
}

void MetricsCollector::iteration_broken(const IterationRecord& record) {
  throw InvariantError("iteration of replica " + std::to_string(record.replica) +
                       ": start and duration must be finite, duration >= 0");
}

LogHistogram MetricsCollector::itl_histogram() const {
  LogHistogram merged(options_.itl_relative_error);
  for (const ReplicaSums& sums : replicas_)
    merged.merge(sums.itl);
  return merged;
}

MetricsCollector::ReplicaRangeUse MetricsCollector::replica_range_use(std::int32_t first,
                                                                      std::int32_t count) const {
  ReplicaRangeUse use;
  for (std::int32_t r = first; r < first + count; ++r) {
    const auto index = static_cast<std::size_t>(r);
    if (r < 0 || index >= replicas_.size()) continue;  // a replica that never ran
    use.iterations += replicas_[index].time.iterations;
    use.batch_size_sum += replicas_[index].time.batch_size_sum;
    use.iteration_time_s += replicas_[index].time.iteration_time_s;
    use.kv_utilization_time_s += replicas_[index].time.kv_utilization_time_s;
    use.kv_memory_time_s += replicas_[index].time.kv_memory_time_s;
  }
  return use;
}

RunSummary MetricsCollector::summarize(double duration_s) const {
  if (!(std::isfinite(duration_s) && duration_s >= 0)) {
    throw InvariantError("run duration must be finite and >= 0, got " + std::to_string(duration_s));
  }
  const std::int64_t completed = ttft_s_.count();
  const ReplicaRangeUse use = replica_range_use(0, static_cast<std::int32_t>(replicas_.size()));
  const LogHistogram itl = itl_histogram();
  const auto per_s = [duration_s](double amount) {
    return duration_s > 0 ? amount / duration_s : 0.0;
  };

  RunSummary s;
  s.requests_completed = completed;
  s.requests_rejected = requests_rejected_;
  s.requests_output_cut = requests_output_cut_;
  s.cut_output_tokens = cut_output_tokens_;
  s.duration_s = duration_s;
  s.throughput_requests_per_s = per_s(static_cast<double>(completed));
  s.throughput_output_tokens_per_s = per_s(static_cast<double>(output_tokens_));
  s.throughput_total_tokens_per_s = per_s(static_cast<double>(prompt_tokens_ + output_tokens_));
  s.prompt_tokens = prompt_tokens_;
  s.output_tokens = output_tokens_;
  s.ttft_s = ttft_s_.stats();
  s.tpot_s = tpot_s_.stats();
  s.itl_s = histogram_latency_stats(itl);
  s.e2e_s = e2e_s_.stats();
  s.normalized_latency_s_per_token = normalized_s_per_token_.stats().mean;
  s.latency_relative_error =
      std::max({ttft_s_.relative_error(), tpot_s_.relative_error(), e2e_s_.relative_error()});
  s.itl_relative_error = itl.relative_error();
  s.mean_batch_size = use.mean_batch_size();
  s.kv_utilization = use.kv_utilization();
  s.kv_memory = use.kv_memory();
  s.cached_prompt_tokens = cached_prompt_tokens_;
  s.prefix_cache_hit_rate = prompt_tokens_ > 0 ? static_cast<double>(cached_prompt_tokens_) /
                                                     static_cast<double>(prompt_tokens_)
                                               : 0.0;
  s.prefix_cache_host_hit_rate =
      prompt_tokens_ > 0
          ? static_cast<double>(host_cached_prompt_tokens_) / static_cast<double>(prompt_tokens_)
          : 0.0;
  s.preemptions = preemptions_;
  if (options_.slo_ttft_s || options_.slo_tpot_s || options_.slo_e2e_s) {
    s.slo_attainment =
        completed > 0 ? static_cast<double>(slo_met_) / static_cast<double>(completed) : 0.0;
    s.goodput_requests_per_s = per_s(static_cast<double>(slo_met_));
  }
  return s;
}

std::vector<double> MetricsCollector::latency_quantiles(Latency latency,
                                                        const std::vector<double>& qs) const {
  std::vector<double> quantiles;
  if (latency == Latency::Itl) {
    const LogHistogram itl = itl_histogram();
    for (double q : qs)
      quantiles.push_back(itl.quantile(q));
    return quantiles;
  }
  const LatencySample& sample = latency == Latency::Ttft   ? ttft_s_
                                : latency == Latency::Tpot ? tpot_s_
                                                           : e2e_s_;
  return sample.quantiles(qs);
}

SteadyStateThroughput MetricsCollector::steady_state() const {
  std::vector<double> arrivals_s;
  arrivals_s.reserve(request_times_.size());
  for (const RequestTiming& r : request_times_)
    arrivals_s.push_back(r.arrival_s);
  std::sort(arrivals_s.begin(), arrivals_s.end());
  SteadyStateThroughput s;
  if (arrivals_s.size() < 2) return s;
  s.window_start_s = arrivals_s[arrivals_s.size() / 10];
  s.window_end_s = arrivals_s.back();
  const double window_s = s.window_end_s - s.window_start_s;
  if (!(window_s > 0)) return s;
  const auto in_window = [&](double t) { return t > s.window_start_s && t <= s.window_end_s; };
  std::int64_t arrived = 0, offered_tokens = 0, completed = 0, completed_tokens = 0;
  for (const RequestTiming& r : request_times_) {
    if (in_window(r.arrival_s)) {
      ++arrived;
      offered_tokens += r.output_tokens;
    }
    if (in_window(r.completion_s)) {  // false for NaN: rejected requests never complete
      ++completed;
      completed_tokens += r.output_tokens;
    }
  }
  s.offered_requests_per_s = static_cast<double>(arrived) / window_s;
  s.offered_output_tokens_per_s = static_cast<double>(offered_tokens) / window_s;
  s.throughput_requests_per_s = static_cast<double>(completed) / window_s;
  s.throughput_output_tokens_per_s = static_cast<double>(completed_tokens) / window_s;
  return s;
}

}  // namespace servesim
