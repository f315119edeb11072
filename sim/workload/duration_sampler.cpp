#include "sim/workload/duration_sampler.h"

#include <algorithm>
#include <cmath>

#include "sim/workload/arrival_process.h"
#include "sim/workload/lognormal.h"

namespace servesim {

DurationSampler::DurationSampler(const DurationSpec& spec) : spec_(spec) {}

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
      seconds =
          std::clamp(lognormal_with_mean(rng, spec_.mean_s, spec_.std_s), spec_.min_s, spec_.max_s);
      break;
  }
  return SimTime::from_seconds(std::clamp(seconds, 0.0, kMaxArrivalTimeS));
}

}  // namespace servesim
