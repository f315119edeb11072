#pragma once

#include "sim/hardware/batch_shape.h"
#include "sim/hardware/iteration_cost.h"

namespace servesim {

// Prices one iteration of one replica. Called once per simulated iteration, so an
// implementation must be O(1) in the batch size, must not allocate and must not throw for
// a shape whose counts are non-negative. Durations are seconds of the slowest pipeline
// stage (the whole forward pass when there is one stage).
class IExecutionTimeModel {
 public:
  virtual ~IExecutionTimeModel() = default;
  virtual IterationCost estimate(const BatchShape& shape) const = 0;
};

}  // namespace servesim
