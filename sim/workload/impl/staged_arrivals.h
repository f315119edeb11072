#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "sim/workload/arrival_process.h"
#include "sim/workload/arrival_stages.h"

namespace servesim {

// Load stages back to back: stage k runs its own process (built for the stage's rate, its
// times counted from 0) shifted to the stage's start, and keeps the arrivals that fall before
// the stage's end. Each stage starts afresh, so a constant or Poisson stage sends its first
// request at its start, as a load generator starting the stage does. Exhausted after the last
// stage.
class StagedArrivals final : public IArrivalProcess {
 public:
  // One process per window, in stage order.
  StagedArrivals(std::vector<StageWindow> windows,
                 std::vector<std::unique_ptr<IArrivalProcess>> stages);

  std::optional<SimTime> next(Rng& rng) override;
  bool exhausted() const override { return stage_ >= windows_.size(); }

 private:
  std::vector<StageWindow> windows_;
  std::vector<std::unique_ptr<IArrivalProcess>> stages_;
  std::size_t stage_ = 0;
};

}  // namespace servesim
