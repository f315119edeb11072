#pragma once

#include "sim/core/rng.h"
#include "sim/core/sim_time.h"
#include "sim/workload/workload_spec.h"

namespace servesim {

// Draws one time (a think time, a tool's latency) from a DurationSpec: fixed, uniform over
// [min_s, max_s], exponential with mean mean_s, or lognormal with the distribution's own mean
// and std clipped to [min_s, max_s]. Every draw is rounded to the nanosecond and kept within
// [0, 1e9 s], the longest simulated time.
class DurationSampler final {
 public:
  explicit DurationSampler(const DurationSpec& spec);
  SimTime sample(Rng& rng) const;

 private:
  DurationSpec spec_;
};

}  // namespace servesim
