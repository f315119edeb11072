#include "sim/workload/impl/constant_arrivals.h"

namespace servesim {

ConstantArrivals::ConstantArrivals(double rate_per_s) : gap_s_(1.0 / rate_per_s) {}

double ConstantArrivals::draw_gap_s(Rng& /*rng*/) const {
  return gap_s_;
}

}  // namespace servesim
