#pragma once

#include "sim/workload/arrival_process.h"

namespace servesim {

// The shared base of the open-loop rate processes: the first request arrives at t = 0 (as a
// benchmark client sends its first request at once) and each next one an independently drawn
// gap later (Poisson and gamma). Gaps are rounded to whole nanoseconds before they are added.
class RenewalArrivals : public IArrivalProcess {
 public:
  std::optional<SimTime> next(Rng& rng) final;
  bool exhausted() const final { return false; }

 private:
  // The next gap in seconds, >= 0.
  virtual double draw_gap_s(Rng& rng) const = 0;

  bool started_ = false;
  SimTime time_;
};

}  // namespace servesim
