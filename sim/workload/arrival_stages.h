#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <vector>

#include "sim/core/sim_time.h"

namespace servesim {

// One load stage, as a load generator runs them (inference-perf's `stages`): arrivals at
// `rate_per_s` for `duration_s`. Stages run back to back.
struct ArrivalStage {
  double rate_per_s = 1.0;  // > 0, finite
  double duration_s = 1.0;  // > 0
  bool operator==(const ArrivalStage&) const = default;
};

// The half-open window [start, end) of one stage in simulated time. Boundaries are whole
// nanoseconds: stage k starts where stage k - 1 ends, at the sum of the earlier durations,
// each rounded to the nanosecond once, so that consecutive windows share their boundary
// exactly and a request belongs to exactly one stage.
struct StageWindow {
  SimTime start;
  SimTime end;
  double start_s() const { return start.seconds(); }
  double end_s() const { return end.seconds(); }
  bool contains(SimTime t) const { return start <= t && t < end; }
  bool operator==(const StageWindow&) const = default;
};

// Each stage's window, in stage order (the first starts at t = 0). The workload's arrivals use
// exactly these windows, so validation can assign each request to a stage by its arrival time.
inline std::vector<StageWindow> stage_windows(std::span<const ArrivalStage> stages) {
  std::vector<StageWindow> windows;
  windows.reserve(stages.size());
  SimTime start;
  for (const ArrivalStage& stage : stages) {
    const SimTime end = start + SimTime::from_seconds(stage.duration_s);
    windows.push_back({start, end});
    start = end;
  }
  return windows;
}

// The index of the stage whose window holds `arrival`, or nullopt when it is outside them all.
inline std::optional<std::size_t> stage_of(std::span<const StageWindow> windows, SimTime arrival) {
  for (std::size_t k = 0; k < windows.size(); ++k) {
    if (windows[k].contains(arrival)) return k;
  }
  return std::nullopt;
}

}  // namespace servesim
