#include "sim/workload/impl/poisson_arrivals.h"

namespace servesim {

PoissonArrivals::PoissonArrivals(double rate_per_s) : rate_per_s_(rate_per_s) {}

double PoissonArrivals::draw_gap_s(Rng& rng) const {
  return rng.exponential(rate_per_s_);
}

}  // namespace servesim
