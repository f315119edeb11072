#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "sim/metrics/log_histogram.h"
#include "sim/metrics/records.h"
#include "sim/metrics/run_summary.h"

namespace servesim {

struct MetricsOptions {
  // Full records cost memory per request and per iteration; the summary does not need them
  // (it keeps a few doubles per request either way), only requests.csv and iterations.csv.
  bool keep_request_records = true;
  bool keep_iteration_records = true;
  std::optional<double> slo_ttft_s;  // a request meets its SLO when ttft <= slo_ttft_s ...
  std::optional<double> slo_tpot_s;  // ... and tpot <= slo_tpot_s; an unset SLO always passes
  double itl_relative_error = LogHistogram::kDefaultRelativeError;
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
  // `count` consecutive inter-token gaps of `gap_s` seconds each (count >= 0) on replica
  // `replica` (>= 0), so that a run of identical gaps is reported in one call rather than
  // one per token.
  void on_token_gaps(std::int32_t replica, double gap_s, std::int64_t count);
  void on_token_gaps(double gap_s, std::int64_t count) { on_token_gaps(0, gap_s, count); }
  void on_iteration(const IterationRecord& record);

  // `duration_s` (>= 0) is the span throughputs are measured over; throughputs are 0 when
  // it is 0.
  RunSummary summarize(double duration_s) const;

  const MetricsOptions& options() const noexcept { return options_; }
  // Completed and rejected requests in the order they were reported; empty unless
  // keep_request_records.
  const std::vector<RequestRecord>& request_records() const noexcept { return requests_; }
  // Empty unless keep_iteration_records. In the order reported, which interleaves replicas
  // in no fixed way; the CSV reporter sorts them.
  const std::vector<IterationRecord>& iteration_records() const noexcept { return iterations_; }
  // Every replica's gaps, merged in replica order.
  LogHistogram itl_histogram() const;

 private:
  // Sums that floating-point rounding makes depend on the order of their terms are kept per
  // replica and added in replica order at the end: a replica reports its own iterations in
  // time order, but how replicas interleave depends on the event order (bulk decoding
  // reports a run of iterations together), and the summary must not.
  struct ReplicaSums {
    explicit ReplicaSums(double itl_relative_error) : itl(itl_relative_error) {}
    LogHistogram itl;
    double iteration_time_s = 0;                  // sum of iteration durations
    double kv_utilization_time_s = 0;             // sum of utilization x duration
    RunSummary::KvMemoryShares kv_memory_time_s;  // share x duration, summed over iterations
  };
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
  bool meets_slo(double ttft_s, std::optional<double> tpot_s) const noexcept;

  MetricsOptions options_;
  std::vector<RequestRecord> requests_;
  std::vector<IterationRecord> iterations_;

  // One value per completed request (tpot: per request with more than one output token).
  std::vector<double> ttft_s_;
  std::vector<double> tpot_s_;
  std::vector<double> e2e_s_;
  std::vector<double> normalized_s_per_token_;
  std::vector<ReplicaSums> replicas_;

  std::int64_t requests_rejected_ = 0;
  std::int64_t prompt_tokens_ = 0;  // of completed requests
  std::int64_t output_tokens_ = 0;  // of completed requests
  std::int64_t preemptions_ = 0;    // of completed requests
  std::int64_t slo_met_ = 0;

  std::int64_t iterations_seen_ = 0;
  std::int64_t batch_size_sum_ = 0;
};

}  // namespace servesim
