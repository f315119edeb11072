#pragma once

#include <cmath>

#include "sim/core/rng.h"

namespace servesim {

// A lognormal draw matched to the mean and standard deviation of X itself (token counts,
// think times): for X = exp(N(mu, sigma^2)), E[X] = exp(mu + sigma^2 / 2) and
// CV^2 = exp(sigma^2) - 1.
inline double lognormal_with_mean(Rng& rng, double mean, double stddev) {
  const double cv = stddev / mean;
  const double variance = std::log1p(cv * cv);
  return rng.lognormal(std::log(mean) - variance / 2, std::sqrt(variance));
}

}  // namespace servesim
