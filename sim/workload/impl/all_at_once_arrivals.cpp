#include "sim/workload/impl/all_at_once_arrivals.h"

namespace servesim {

std::optional<SimTime> AllAtOnceArrivals::next(Rng& /*rng*/) {
  return SimTime();
}

}  // namespace servesim
