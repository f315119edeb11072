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
  // The default's calls, made here without a virtual call each.
  void on_decode_run(const DecodeRunIterations& run) override { report_decode_run(*this, run); }
  void on_request_finished(const Request& request, SimTime now) override;
  void on_request_rejected(const RequestSpec& request, const std::string& reason,
                           SimTime now) override;

 private:
  MetricsCollector& collector_;
};

}  // namespace servesim
