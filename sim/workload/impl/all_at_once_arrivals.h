#pragma once

#include "sim/workload/arrival_process.h"

namespace servesim {

// Every request at t = 0 (an infinite rate): the offline, maximum-throughput setting.
class AllAtOnceArrivals final : public IArrivalProcess {
 public:
  std::optional<SimTime> next(Rng& rng) override;
  bool exhausted() const override { return false; }
};

}  // namespace servesim
