#include "sim/workload/duration_sampler.h"

#include <algorithm>
#include <cmath>

#include "sim/workload/arrival_process.h"

namespace servesim {

DurationSampler::DurationSampler(const DurationSpec& spec) : spec_(spec) {
  if (spec_.distribution == DurationKind::Lognormal) {
    // As for token counts (token_count_sampler.cpp): matched to the mean and CV of X itself.
    const double cv = spec_.std_s / spec_.mean_s;
    const double variance = std::log1p(cv * cv);
    log_sigma_ = std::sqrt(variance);
    log_mu_ = std::log(spec_.mean_s) - variance / 2;
  }
}

SimTime DurationSampler::sample(Rng& rng) const {
  double seconds = spec_.seconds;
  switch (spec_.distribution) {
    case DurationKind::Fixed:
      break;
    case DurationKind::Uniform:
      seconds = rng.uniform(spec_.min_s, spec_.max_s);
      break;
    case DurationKind::Exponential:
      seconds = rng.exponential(1.0 / spec_.mean_s);
      break;
    case DurationKind::Lognormal:
      seconds = std::clamp(rng.lognormal(log_mu_, log_sigma_), spec_.min_s, spec_.max_s);
      break;
  }
  return SimTime::from_seconds(std::clamp(seconds, 0.0, kMaxArrivalTimeS));
}

}  // namespace servesim
