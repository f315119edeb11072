#pragma once

#include <span>

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

  // The windowed layers' spans this model prices prompt chunks by: a BatchShape whose `spans`
  // equal them has its windowed sums priced, any other shape has its windowed layers priced
  // as full ones. None by default.
  virtual AttentionSpans attention_spans() const noexcept { return {}; }

  // The durations (total_time_s) of a run of decode-only iterations: `first`, then `first`
  // with every context one token longer, and so on, one value per element of `durations_s`.
  // Each must equal estimate() of its shape exactly (bulk decoding relies on it); an
  // implementation may price only what the contexts change. This default prices each one.
  virtual void estimate_decode_run(const BatchShape& first, std::span<double> durations_s) const {
    BatchShape shape = first;
    for (double& duration_s : durations_s) {
      duration_s = estimate(shape).total_time_s;
      shape.decode_context_tokens += shape.decode_sequences;
    }
  }
};

}  // namespace servesim
