#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/metrics/latency_sample.h"
#include "sim/metrics/log_histogram.h"
#include "sim/metrics/record_sink.h"
#include "sim/metrics/records.h"
#include "sim/metrics/run_summary.h"

namespace servesim {

struct MetricsOptions {
  // Full records cost memory per request and per iteration; the summary does not need them
  // (its memory is bounded: exact_latency_limit), only requests.csv and iterations.csv, which a
  // record sink can also write as the run goes (set_record_sink).
  bool keep_request_records = true;
  bool keep_iteration_records = true;
  // When each request arrived, started and finished (RequestTiming, 40 bytes a request), for
  // the studies' steady-state analysis.
  bool keep_request_timings = true;
  // A disaggregated run: requests report their TTFT in parts (requests.csv's ttft_PART_s
  // columns, empty for a request without parts).
  bool ttft_parts = false;
  std::optional<double> slo_ttft_s;  // a request meets its SLO when ttft <= slo_ttft_s,
  std::optional<double> slo_tpot_s;  // tpot <= slo_tpot_s and e2e <= slo_e2e_s; a target
  std::optional<double> slo_e2e_s;   // that is not set always passes
  double itl_relative_error = LogHistogram::kDefaultRelativeError;
  // TTFT, TPOT and E2E are exact for up to this many requests, then kept in histograms of
  // relative error `latency_relative_error` (LatencySample).
  std::int64_t exact_latency_limit = LatencySample::kDefaultExactLimit;
  double latency_relative_error = LatencySample::kDefaultRelativeError;
};

// When one request arrived, started and finished, kept for every request when
// keep_request_timings (a few doubles each).
struct RequestTiming {
  double arrival_s = 0;
  double first_scheduled_s = 0;  // NaN when rejected
  double completion_s = 0;       // NaN when rejected
  std::int64_t prompt_tokens = 0;
  std::int64_t output_tokens = 0;  // a rejected request: the output it asked for
};

// Receives what the simulation reports, as it happens, and reduces it to a RunSummary. It
// only observes: nothing here feeds back into scheduling. One collector per run; replicas
// share it (records carry their replica id).
//
// The on_* calls check their records and throw InvariantError on impossible ones (a finished
// request without output, times running backwards, non-finite values): such a record is a
// simulator bug, and a summary built on it would be silently wrong.
class MetricsCollector final {
 public:
  explicit MetricsCollector(MetricsOptions options = {});

  // A request produced its last output token. `record.rejected` must be false.
  void on_request_finished(const RequestRecord& record);
  // A request was turned away without being served. `record.rejected` must be true.
  void on_request_rejected(const RequestRecord& record);
  // Disaggregation: a request's TTFT parts, kept with its record (requests.csv), reported
  // before the request finishes.
  void on_ttft_parts(std::int64_t request, const std::array<double, kTtftParts>& parts) {
    if (options_.keep_request_records || sink_ != nullptr) ttft_parts_.emplace(request, parts);
  }
  // The TTFT parts of request `id`, if it has them (and the records are kept).
  const std::array<double, kTtftParts>* ttft_parts(std::int64_t id) const {
    const auto it = ttft_parts_.find(id);
    return it == ttft_parts_.end() ? nullptr : &it->second;
  }
  bool has_ttft_parts() const noexcept { return options_.ttft_parts; }
  // Every record from here on also goes to `sink` (nullptr: none), as it is reported, and
  // iterations_reported_before() is passed on to it; the collector keeps only the records its
  // options ask for. The sink must outlive the reports.
  void set_record_sink(IRecordSink* sink) noexcept { sink_ = sink; }
  // Every iteration starting before `start_s` has been reported.
  void iterations_reported_before(double start_s) {
    if (sink_ != nullptr) sink_->iterations_reported_before(start_s);
  }
  // `count` consecutive inter-token gaps of `gap_s` seconds each (count >= 0) on replica
  // `replica` (>= 0), so that a run of identical gaps is reported in one call rather than
  // one per token.
  void on_token_gaps(std::int32_t replica, double gap_s, std::int64_t count);
  void on_token_gaps(double gap_s, std::int64_t count) { on_token_gaps(0, gap_s, count); }
  // on_token_gaps(replica, gap_s(k), count_of(k)) for k = 1 .. gaps, in that order.
  template <class CountOf, class GapOf>
  void on_token_gaps(std::int32_t replica, std::size_t gaps, const CountOf& count_of,
                     const GapOf& gap_s);
  void on_iteration(const IterationRecord& record) {
    check_iteration(record);
    ReplicaSums& sums = replica_sums(record.replica);
    sums.time.add(record);
    if (options_.keep_iteration_records) iterations_.push_back(record);
    if (sink_ != nullptr) sink_->on_iteration(record);
  }
  // `count` iterations of one replica, each as `first` with the fields that
  // `set_iteration(k, record)` sets for k = 1 .. count (times and KV memory, say), reported
  // as on_iteration for each in turn would: the same sums, in the same order, kept in
  // registers for the run rather than in memory between calls.
  template <class SetIteration>
  void on_iterations(const IterationRecord& first, std::size_t count,
                     const SetIteration& set_iteration);

  // `duration_s` (>= 0) is the span throughputs are measured over; throughputs are 0 when
  // it is 0.
  RunSummary summarize(double duration_s) const;
  // Offered and achieved throughputs over the steady-state window (see the struct).
  SteadyStateThroughput steady_state() const;
  // Every request, completed or rejected, in the order reported (studies judge stability
  // and the steady state from them; sim/study/steady_state.h). Empty unless
  // keep_request_timings.
  const std::vector<RequestTiming>& request_timings() const noexcept { return request_times_; }

  const MetricsOptions& options() const noexcept { return options_; }
  // Completed and rejected requests in the order they were reported; empty unless
  // keep_request_records.
  const std::vector<RequestRecord>& request_records() const noexcept { return requests_; }
  // Empty unless keep_iteration_records. In the order reported, which interleaves replicas
  // in no fixed way; the CSV reporter sorts them.
  const std::vector<IterationRecord>& iteration_records() const noexcept { return iterations_; }
  // Rejected requests counted by reason, in the order each reason first appeared. A reason
  // is its text without the request's own figure, the first parenthesised number
  // ("prompt + output tokens exceed the maximum sequence length (4096)"), so that requests
  // turned away by the same limit count together.
  const std::vector<std::pair<std::string, std::int64_t>>& rejections_by_reason() const noexcept {
    return rejections_by_reason_;
  }
  // Every replica's gaps, merged in replica order.
  LogHistogram itl_histogram() const;

  // The iterations of replicas [first, first + count): their summed durations, and their
  // KV utilization and memory shares weighted by duration (summed in replica order).
  struct ReplicaRangeUse {
    std::int64_t iterations = 0;
    std::int64_t batch_size_sum = 0;
    double iteration_time_s = 0;
    double kv_utilization_time_s = 0;
    KvMemoryShares kv_memory_time_s;
    // Requests per iteration, on average (0 when none ran).
    double mean_batch_size() const {
      return iterations > 0 ? static_cast<double>(batch_size_sum) / static_cast<double>(iterations)
                            : 0.0;
    }
    // The KV capacity in use, time-weighted over the iterations (0 when none ran).
    double kv_utilization() const {
      return iteration_time_s > 0 ? kv_utilization_time_s / iteration_time_s : 0.0;
    }
    // The KV memory shares over the iterations' time (0 when none ran).
    KvMemoryShares kv_memory() const {
      return iteration_time_s > 0 ? kv_memory_time_s.over(iteration_time_s) : KvMemoryShares{};
    }
  };
  ReplicaRangeUse replica_range_use(std::int32_t first, std::int32_t count) const;

  enum class Latency { Ttft, Tpot, Itl, E2e };
  // The q-quantiles (each q in [0, 1]) of one latency distribution, in seconds, computed as
  // summarize() computes its percentiles, so that the same q gives the same value: for TTFT,
  // TPOT and E2E exact up to exact_latency_limit requests, else within
  // latency_relative_error; within the histogram's relative error for ITL.
  std::vector<double> latency_quantiles(Latency latency, const std::vector<double>& qs) const;

 private:
  // Sums that floating-point rounding makes depend on the order of their terms are kept per
  // replica and added in replica order at the end: a replica reports its own iterations in
  // time order, but how replicas interleave depends on the event order (bulk decoding
  // reports a run of iterations together), and the summary must not.
  struct TimeSums {
    std::int64_t iterations = 0;
    std::int64_t batch_size_sum = 0;   // sequences, summed over iterations
    double iteration_time_s = 0;       // sum of iteration durations
    double kv_utilization_time_s = 0;  // sum of utilization x duration
    KvMemoryShares kv_memory_time_s;   // share x duration, summed over iterations
    void add(const IterationRecord& record) {
      ++iterations;
      batch_size_sum += record.batch_size;
      iteration_time_s += record.duration_s;
      kv_utilization_time_s += record.kv_utilization() * record.duration_s;
      if (record.kv_capacity_tokens > 0) {
        const double weight = record.duration_s / static_cast<double>(record.kv_capacity_tokens);
        const KvMemoryTokens& m = record.kv_memory;
        KvMemoryShares& t = kv_memory_time_s;
        t.token_states += static_cast<double>(m.token_states) * weight;
        t.reserved += static_cast<double>(m.reserved) * weight;
        t.internal_fragmentation += static_cast<double>(m.internal_fragmentation) * weight;
        t.external_fragmentation += static_cast<double>(m.external_fragmentation) * weight;
        t.free += static_cast<double>(m.free) * weight;
        t.cached += static_cast<double>(m.cached) * weight;
      }
    }
  };
  struct ReplicaSums {
    explicit ReplicaSums(double itl_relative_error) : itl(itl_relative_error) {}
    LogHistogram itl;
    TimeSums time;
  };
  static void check_iteration(const IterationRecord& record) {
    if (!(std::isfinite(record.start_s) && std::isfinite(record.duration_s) &&
          record.duration_s >= 0)) {
      [[unlikely]] iteration_broken(record);
    }
  }
  static void check_gap(double gap_s) {
    if (!(std::isfinite(gap_s) && gap_s >= 0)) [[unlikely]]
      gap_broken(gap_s);
  }
  // Called for every iteration and token gap: the common case is inline.
  ReplicaSums& replica_sums(std::int32_t replica) {
    const auto index = static_cast<std::size_t>(replica);
    return replica >= 0 && index < replicas_.size() ? replicas_[index] : add_replica_sums(replica);
  }
  ReplicaSums& add_replica_sums(std::int32_t replica);
  // Out of line, so that the per-iteration paths stay small.
  [[noreturn, gnu::noinline, gnu::cold]] static void iteration_broken(
      const IterationRecord& record);
  [[noreturn, gnu::noinline, gnu::cold]] static void gap_broken(double gap_s);
  bool meets_slo(double ttft_s, std::optional<double> tpot_s, double e2e_s) const noexcept;

  // A request's record, to the records kept and the sink; its TTFT parts leave the map
  // unless the records are kept.
  void pass_request(const RequestRecord& record);

  MetricsOptions options_;
  IRecordSink* sink_ = nullptr;
  std::vector<RequestRecord> requests_;
  std::unordered_map<std::int64_t, std::array<double, kTtftParts>> ttft_parts_;
  std::vector<IterationRecord> iterations_;

  // One value per completed request (tpot: per request with more than one output token).
  LatencySample ttft_s_;
  LatencySample tpot_s_;
  LatencySample e2e_s_;
  LatencySample normalized_s_per_token_;
  std::vector<ReplicaSums> replicas_;
  std::vector<RequestTiming> request_times_;

  std::int64_t requests_rejected_ = 0;
  std::vector<std::pair<std::string, std::int64_t>> rejections_by_reason_;
  std::int64_t prompt_tokens_ = 0;              // of completed requests
  std::int64_t cached_prompt_tokens_ = 0;       // of completed requests, at first admission
  std::int64_t host_cached_prompt_tokens_ = 0;  // of those, from a host tier
  std::int64_t output_tokens_ = 0;              // of completed requests
  std::int64_t preemptions_ = 0;                // of completed requests
  std::int64_t requests_output_cut_ = 0;
  std::int64_t cut_output_tokens_ = 0;
  std::int64_t slo_met_ = 0;
};

template <class CountOf, class GapOf>
void MetricsCollector::on_token_gaps(std::int32_t replica, std::size_t gaps,
                                     const CountOf& count_of, const GapOf& gap_s) {
  LogHistogram& itl = replica_sums(replica).itl;
  for (std::size_t k = 1; k <= gaps; ++k) {
    const double gap = gap_s(k);
    check_gap(gap);
    itl.add(gap, count_of(k));
  }
}

template <class SetIteration>
void MetricsCollector::on_iterations(const IterationRecord& first, std::size_t count,
                                     const SetIteration& set_iteration) {
  if (options_.keep_iteration_records || sink_ != nullptr) {
    IterationRecord record = first;  // the fields the iterations share are set once
    for (std::size_t k = 1; k <= count; ++k) {
      set_iteration(k, record);
      on_iteration(record);
    }
    return;
  }
  ReplicaSums& sums = replica_sums(first.replica);
  TimeSums time = sums.time;
  IterationRecord record = first;  // not kept: the compiler keeps what the sums read
  for (std::size_t k = 1; k <= count; ++k) {
    set_iteration(k, record);
    check_iteration(record);
    time.add(record);
  }
  sums.time = time;
}

}  // namespace servesim
