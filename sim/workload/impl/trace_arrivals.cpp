#include "sim/workload/impl/trace_arrivals.h"

#include <cmath>
#include <sstream>
#include <string>

#include "sim/core/error.h"

namespace servesim {

TraceArrivals::TraceArrivals(std::shared_ptr<const Trace> trace, double time_scale)
    : trace_(std::move(trace)), time_scale_(time_scale) {}

std::optional<SimTime> TraceArrivals::next(Rng& /*rng*/) {
  if (exhausted()) return std::nullopt;
  const SimTime recorded = trace_->arrivals[next_row_++];
  if (time_scale_ == 1.0) return recorded;  // exact, with no trip through floating point
  const double scaled_s = recorded.seconds() * time_scale_;
  if (!(scaled_s <= kMaxArrivalTimeS)) {
    std::ostringstream when;
    when << scaled_s;
    throw InputError(trace_->source_name, "data row " + std::to_string(next_row_) + " arrives at " +
                                              when.str() + " s after trace.time_scale, past " +
                                              "the longest simulated time, 1e9 s");
  }
  return SimTime::from_ns(
      static_cast<std::int64_t>(std::llround(static_cast<double>(recorded.ns()) * time_scale_)));
}

}  // namespace servesim
