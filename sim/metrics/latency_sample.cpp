#include "sim/metrics/latency_sample.h"

#include <algorithm>
#include <string>

#include "sim/core/error.h"

namespace servesim {

LatencySample::LatencySample(std::int64_t exact_limit, double relative_error)
    : exact_limit_(exact_limit), relative_error_(relative_error) {
  if (exact_limit < 0) {
    throw InputError("exact latency limit", "must be >= 0, got " + std::to_string(exact_limit));
  }
  static_cast<void>(LogHistogram(relative_error));  // throws when out of range
}

void LatencySample::to_sketch() {
  sketch_.emplace(relative_error_);
  for (const double value : exact_)
    sketch_->add(value);
  std::vector<double>().swap(exact_);  // frees the memory
}

LatencyStats LatencySample::stats() const {
  return sketch_ ? histogram_latency_stats(*sketch_) : exact_latency_stats(exact_);
}

std::vector<double> LatencySample::quantiles(const std::vector<double>& qs) const {
  std::vector<double> result;
  result.reserve(qs.size());
  if (sketch_) {
    for (const double q : qs)
      result.push_back(sketch_->quantile(q));
    return result;
  }
  std::vector<double> sorted = exact_;
  std::sort(sorted.begin(), sorted.end());
  for (const double q : qs)
    result.push_back(percentile_of_sorted(sorted, q));
  return result;
}

}  // namespace servesim
