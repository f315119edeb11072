#include "sim/workload/impl/gamma_arrivals.h"

namespace servesim {

GammaArrivals::GammaArrivals(double rate_per_s, double cv)
    : shape_(1.0 / (cv * cv)), scale_s_(1.0 / (rate_per_s * shape_)) {}

double GammaArrivals::draw_gap_s(Rng& rng) const {
  return rng.gamma(shape_, scale_s_);
}

}  // namespace servesim
