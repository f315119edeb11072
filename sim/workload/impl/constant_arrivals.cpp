#include "sim/workload/impl/constant_arrivals.h"

#include "sim/core/error.h"

namespace servesim {

ConstantArrivals::ConstantArrivals(double rate_per_s) : rate_per_s_(rate_per_s) {}

std::optional<SimTime> ConstantArrivals::next(Rng& /*rng*/) {
  const double time_s = static_cast<double>(emitted_) / rate_per_s_;
  if (!(time_s <= kMaxArrivalTimeS)) {
    throw InputError("workload",
                     "arrivals pass the longest simulated time, 1e9 s (31.7 "
                     "years): raise arrival.rate_per_s or lower num_requests");
  }
  ++emitted_;
  return SimTime::from_seconds(time_s);
}

}  // namespace servesim
