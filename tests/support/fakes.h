#pragma once

// Fakes shared by the tests: a time model, observers. One copy each, here.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sim/cluster/serving_observer.h"
#include "sim/hardware/execution_time_model.h"

namespace servesim::test {

// Every iteration takes a fixed time, plus a fixed time per prefill token.
class FixedTimeModel final : public IExecutionTimeModel {
 public:
  explicit FixedTimeModel(double iteration_s, double per_prefill_token_s = 0)
      : iteration_s_(iteration_s), per_prefill_token_s_(per_prefill_token_s) {}
  IterationCost estimate(const BatchShape& shape) const override {
    IterationCost cost;
    cost.total_time_s =
        iteration_s_ + per_prefill_token_s_ * static_cast<double>(shape.prefill_tokens);
    return cost;
  }

 private:
  double iteration_s_;
  double per_prefill_token_s_;
};

// Hears everything and keeps nothing.
struct NullObserver final : IServingObserver {
  void on_iteration(const IterationRecord&) override {}
  void on_token_gaps(std::int32_t, double, std::int64_t) override {}
  void on_request_finished(const Request&, SimTime) override {}
  void on_request_rejected(const RequestSpec&, const std::string&, SimTime) override {}
};

// Keeps every iteration, finished request and rejection, and sums the token gaps.
struct RecordingObserver final : IServingObserver {
  std::vector<IterationRecord> iterations;
  std::vector<Request> finished;
  std::vector<std::string> rejected;
  double gap_sum_s = 0;
  std::int64_t gaps = 0;
  // The decode runs reported (bulk decoding): each one's first start and last end, seconds.
  std::vector<std::pair<double, double>> runs;
  void on_iteration(const IterationRecord& i) override { iterations.push_back(i); }
  void on_decode_run(const DecodeRunIterations& run) override {
    runs.emplace_back(run.first.start_s, run.ends.back().seconds());
    IServingObserver::on_decode_run(run);
  }
  void on_token_gaps(std::int32_t, double gap_s, std::int64_t count) override {
    gap_sum_s += gap_s * static_cast<double>(count);
    gaps += count;
  }
  void on_request_finished(const Request& r, SimTime) override { finished.push_back(r); }
  void on_request_rejected(const RequestSpec&, const std::string& reason, SimTime) override {
    rejected.push_back(reason);
  }
};

}  // namespace servesim::test
