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

std::vector<double> LatencySample::sorted_exact() const {
  std::vector<double> sorted = exact_;
  std::sort(sorted.begin(), sorted.end());
  return sorted;
}

LatencyStats LatencySample::stats() const {
  return sketch_ ? histogram_latency_stats(*sketch_) : exact_latency_stats(exact_);
}

double LatencySample::min() const {
  if (sketch_) return sketch_->min();
  return exact_.empty() ? 0.0 : *std::min_element(exact_.begin(), exact_.end());
}

double LatencySample::max() const {
  if (sketch_) return sketch_->max();
  return exact_.empty() ? 0.0 : *std::max_element(exact_.begin(), exact_.end());
}

std::vector<double> LatencySample::values_at_ranks(const std::vector<std::int64_t>& ranks) const {
  for (const std::int64_t rank : ranks) {
    if (rank < 0 || rank >= count()) {
      throw InvariantError("LatencySample: rank " + std::to_string(rank) + " outside [0, " +
                           std::to_string(count()) + ")");
    }
  }
  if (sketch_) return sketch_->values_at_ranks(ranks);
  const std::vector<double> sorted = sorted_exact();
  std::vector<double> values;
  values.reserve(ranks.size());
  for (const std::int64_t rank : ranks)
    values.push_back(sorted[static_cast<std::size_t>(rank)]);
  return values;
}

std::vector<double> LatencySample::quantiles(const std::vector<double>& qs) const {
  std::vector<double> result;
  result.reserve(qs.size());
  if (sketch_) {
    for (const double q : qs)
      result.push_back(sketch_->quantile(q));
    return result;
  }
  const std::vector<double> sorted = sorted_exact();
  for (const double q : qs)
    result.push_back(percentile_of_sorted(sorted, q));
  return result;
}

}  // namespace servesim
