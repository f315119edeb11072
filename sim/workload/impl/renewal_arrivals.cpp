#include "sim/workload/impl/renewal_arrivals.h"

namespace servesim {

std::optional<SimTime> RenewalArrivals::next(Rng& rng) {
  if (started_) {
    time_ += SimTime::from_seconds(draw_gap_s(rng));
  } else {
    started_ = true;
  }
  return time_;
}

}  // namespace servesim
