#pragma once

#include <span>

namespace servesim::validation {

// Summary of repeated timings of one operation. The median is the headline figure because
// one preempted or clock-throttled repeat must not move it; min and max show the spread.
struct TimingStats {
  double median_s = 0.0;
  double min_s = 0.0;
  double max_s = 0.0;
};

// The median of an even count is the mean of the two middle samples. Throws
// std::invalid_argument on an empty set: no samples is a harness bug, not a zero time.
TimingStats compute_timing_stats(std::span<const double> samples_s);

}  // namespace servesim::validation
