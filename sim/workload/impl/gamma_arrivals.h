#pragma once

#include "sim/workload/impl/renewal_arrivals.h"

namespace servesim {

// Gamma-distributed gaps with a chosen coefficient of variation: bursty traffic when cv > 1
// (BurstGPT; the Azure code trace has CV 13), smoother than Poisson when cv < 1.
class GammaArrivals final : public RenewalArrivals {
 public:
  GammaArrivals(double rate_per_s, double cv);

 private:
  double draw_gap_s(Rng& rng) const override;
  // shape = 1 / cv^2 and scale = 1 / (rate * shape) give mean 1 / rate and CV cv.
  double shape_;
  double scale_s_;
};

}  // namespace servesim
