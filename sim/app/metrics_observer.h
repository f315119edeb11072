#pragma once

#include "sim/cluster/serving_observer.h"
#include "sim/metrics/metrics_collector.h"
#include "sim/workload/workload_source.h"

namespace servesim {

// Turns the serving run's signals into metric records.
class MetricsObserver final : public IServingObserver {
 public:
  explicit MetricsObserver(MetricsCollector& collector) : collector_(collector) {}

  void on_iteration(const IterationRecord& iteration) override {
    collector_.on_iteration(iteration);
  }
  void on_token_gaps(std::int32_t replica, double gap_s, std::int64_t count) override {
    collector_.on_token_gaps(replica, gap_s, count);
  }
  // What the default reports, with the collector's sums kept in registers over the run.
  void on_decode_run(const DecodeRunIterations& run) override {
    collector_.on_iterations(
        run.first, run.usages.size(),
        [&run](std::size_t k, IterationRecord& record) { run.set_iteration(record, k); });
    collector_.on_token_gaps(
        run.first.replica, run.usages.size(), [&run](std::size_t k) { return run.gaps_at(k); },
        [&run](std::size_t k) { return run.gap_s(k); });
  }
  void on_request_finished(const Request& request, SimTime now) override;
  void on_ttft_parts(std::int64_t request, const std::array<double, kTtftParts>& parts) override {
    collector_.on_ttft_parts(request, parts);
  }
  void on_request_rejected(const RequestSpec& request, const std::string& reason,
                           SimTime now) override;
  void on_iterations_reported_before(SimTime start) override {
    collector_.iterations_reported_before(start.seconds());
  }

 private:
  MetricsCollector& collector_;
};

}  // namespace servesim
