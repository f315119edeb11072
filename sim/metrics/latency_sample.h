#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "sim/metrics/latency_stats.h"
#include "sim/metrics/log_histogram.h"

namespace servesim {

// One latency distribution (a value per request): exact while it holds at most `exact_limit`
// values, then a LogHistogram of relative error `relative_error`, so that memory stays
// bounded however many requests a run has. Exact: percentiles as numpy's, the mean summed in
// ascending order. Sketched: count, mean, max and stddev exact up to rounding, each percentile
// within a factor `relative_error` of the exact one (LogHistogram).
class LatencySample final {
 public:
  static constexpr std::int64_t kDefaultExactLimit = 100'000;
  static constexpr double kDefaultRelativeError = 0.001;

  // `exact_limit` >= 0; `relative_error` in (0, 1).
  explicit LatencySample(std::int64_t exact_limit = kDefaultExactLimit,
                         double relative_error = kDefaultRelativeError);

  // `value` must be finite and >= 0.
  void add(double value) {
    if (!sketch_) {
      exact_.push_back(value);
      if (static_cast<std::int64_t>(exact_.size()) > exact_limit_) [[unlikely]]
        to_sketch();
      return;
    }
    sketch_->add(value);
  }

  std::int64_t count() const noexcept {
    return sketch_ ? sketch_->count() : static_cast<std::int64_t>(exact_.size());
  }
  bool exact() const noexcept { return !sketch_; }
  // 0 while exact, else the sketch's relative error.
  double relative_error() const noexcept { return sketch_ ? sketch_->relative_error() : 0.0; }
  double min() const;  // 0 when empty
  double max() const;  // 0 when empty
  LatencyStats stats() const;
  // The values of 0-based ranks `ranks` in ascending order of value (each in [0, count)):
  // exact while exact, else within relative_error() (LogHistogram::value_at_rank).
  std::vector<double> values_at_ranks(const std::vector<std::int64_t>& ranks) const;
  // The q-quantiles (each q in [0, 1]) as stats() computes its percentiles.
  std::vector<double> quantiles(const std::vector<double>& qs) const;

 private:
  void to_sketch();
  std::vector<double> sorted_exact() const;  // the exact values, ascending

  std::int64_t exact_limit_;
  double relative_error_;
  std::vector<double> exact_;
  std::optional<LogHistogram> sketch_;
};

}  // namespace servesim
