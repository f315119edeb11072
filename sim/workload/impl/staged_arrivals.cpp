#include "sim/workload/impl/staged_arrivals.h"

#include "sim/core/error.h"

namespace servesim {

StagedArrivals::StagedArrivals(std::vector<StageWindow> windows,
                               std::vector<std::unique_ptr<IArrivalProcess>> stages)
    : windows_(std::move(windows)), stages_(std::move(stages)) {
  if (windows_.size() != stages_.size()) {
    throw InvariantError("staged arrivals need one process per stage window");
  }
}

std::optional<SimTime> StagedArrivals::next(Rng& rng) {
  while (stage_ < windows_.size()) {
    const StageWindow& window = windows_[stage_];
    const std::optional<SimTime> offset = stages_[stage_]->next(rng);
    // A stage's own process is open-loop and endless; one that stops ends its stage.
    if (offset) {
      const SimTime arrival = window.start + *offset;
      if (arrival < window.end) return arrival;
    }
    ++stage_;
  }
  return std::nullopt;
}

}  // namespace servesim
