#include "sim/workload/impl/renewal_arrivals.h"

#include "sim/core/error.h"

namespace servesim {

std::optional<SimTime> RenewalArrivals::next(Rng& rng) {
  if (started_) {
    const double gap_s = draw_gap_s(rng);
    if (!(gap_s <= kMaxArrivalTimeS - time_.seconds())) {
      throw InputError("workload",
                       "arrivals pass the longest simulated time, 1e9 s (31.7 "
                       "years): raise arrival.rate_per_s or lower num_requests");
    }
    time_ += SimTime::from_seconds(gap_s);
  } else {
    started_ = true;
  }
  return time_;
}

}  // namespace servesim
