#pragma once

#include "sim/workload/impl/renewal_arrivals.h"

namespace servesim {

// A fixed gap of 1 / rate: no randomness, for controlled experiments.
class ConstantArrivals final : public RenewalArrivals {
 public:
  explicit ConstantArrivals(double rate_per_s);

 private:
  double draw_gap_s(Rng& rng) const override;
  double gap_s_;
};

}  // namespace servesim
