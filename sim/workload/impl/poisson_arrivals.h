#pragma once

#include "sim/workload/impl/renewal_arrivals.h"

namespace servesim {

// Exponential gaps: the arrivals of many independent users, inter-arrival CV 1.
class PoissonArrivals final : public RenewalArrivals {
 public:
  explicit PoissonArrivals(double rate_per_s);

 private:
  double draw_gap_s(Rng& rng) const override;
  double rate_per_s_;
};

}  // namespace servesim
