#pragma once

#include <cstdint>

#include "sim/workload/arrival_process.h"

namespace servesim {

// Evenly spaced arrivals, no randomness, for controlled experiments (inference-perf's and the
// vLLM benchmark's fixed intervals): arrival k is at k / rate, the first at t = 0. Each is
// rounded to the nanosecond on its own rather than adding a rounded gap, so the spacing does
// not drift: exactly ceil(rate x T) arrivals fall in [0, T) (3,000 for 5 req/s over 600 s).
class ConstantArrivals final : public IArrivalProcess {
 public:
  explicit ConstantArrivals(double rate_per_s);
  std::optional<SimTime> next(Rng& rng) override;
  bool exhausted() const override { return false; }

 private:
  double rate_per_s_;
  std::int64_t emitted_ = 0;
};

}  // namespace servesim
