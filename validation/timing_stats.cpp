#include "validation/timing_stats.h"

#include <algorithm>
#include <stdexcept>
#include <vector>

namespace servesim::validation {

TimingStats compute_timing_stats(std::span<const double> samples_s) {
  if (samples_s.empty()) {
    throw std::invalid_argument("compute_timing_stats: no timing samples");
  }
  std::vector<double> sorted(samples_s.begin(), samples_s.end());
  std::sort(sorted.begin(), sorted.end());
  const std::size_t mid = sorted.size() / 2;
  const double median_s =
      sorted.size() % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2.0;
  return TimingStats{median_s, sorted.front(), sorted.back()};
}

}  // namespace servesim::validation
