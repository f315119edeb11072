#include "sim/workload/impl/trace_arrivals.h"

#include <cmath>

namespace servesim {

TraceArrivals::TraceArrivals(std::shared_ptr<const Trace> trace, double time_scale)
    : trace_(std::move(trace)), time_scale_(time_scale) {}

std::optional<SimTime> TraceArrivals::next(Rng& /*rng*/) {
  if (exhausted()) return std::nullopt;
  const SimTime recorded = trace_->arrivals[next_row_++];
  if (time_scale_ == 1.0) return recorded;  // exact, with no trip through floating point
  return SimTime::from_ns(
      static_cast<std::int64_t>(std::llround(static_cast<double>(recorded.ns()) * time_scale_)));
}

}  // namespace servesim
