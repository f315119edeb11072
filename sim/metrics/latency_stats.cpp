#include "sim/metrics/latency_stats.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "sim/core/error.h"

namespace servesim {

double percentile_of_sorted(std::span<const double> sorted, double q) {
  if (!(q >= 0 && q <= 1)) {
    throw InvariantError("percentile: q must be in [0, 1], got " + std::to_string(q));
  }
  if (sorted.empty()) return 0.0;
  const double position = q * static_cast<double>(sorted.size() - 1);
  const auto lower = static_cast<std::size_t>(std::floor(position));
  const double fraction = position - static_cast<double>(lower);
  if (fraction == 0 || lower + 1 >= sorted.size()) return sorted[lower];
  return sorted[lower] + fraction * (sorted[lower + 1] - sorted[lower]);
}

LatencyStats exact_latency_stats(std::vector<double> values) {
  LatencyStats stats;
  if (values.empty()) return stats;
  std::sort(values.begin(), values.end());
  // Summed in ascending order: deterministic whatever order the values arrived in.
  double sum = 0;
  for (double value : values)
    sum += value;
  stats.mean = sum / static_cast<double>(values.size());
  stats.p50 = percentile_of_sorted(values, 0.50);
  stats.p90 = percentile_of_sorted(values, 0.90);
  stats.p95 = percentile_of_sorted(values, 0.95);
  stats.p99 = percentile_of_sorted(values, 0.99);
  stats.max = values.back();
  stats.stddev = standard_deviation(values, stats.mean);
  return stats;
}

double standard_deviation(std::span<const double> values, double mean) {
  if (values.empty()) return 0.0;
  // Two passes (the mean first) rather than a sum of squares: no cancellation, and equal
  // values give exactly 0.
  double squares = 0;
  for (double value : values)
    squares += (value - mean) * (value - mean);
  return std::sqrt(squares / static_cast<double>(values.size()));
}

LatencyStats histogram_latency_stats(const LogHistogram& histogram) {
  LatencyStats stats;
  stats.mean = histogram.mean();
  stats.p50 = histogram.quantile(0.50);
  stats.p90 = histogram.quantile(0.90);
  stats.p95 = histogram.quantile(0.95);
  stats.p99 = histogram.quantile(0.99);
  stats.max = histogram.max();
  stats.stddev = histogram.stddev();
  return stats;
}

}  // namespace servesim
