#pragma once

#include <memory>

#include "sim/hardware/execution_time_model.h"
#include "sim/scheduler/batch_plan.h"

namespace servesim {

// Prices what proposing the drafts of a step costs on the GPU, before the target verifies
// them. A proposer without a network (n-gram prompt lookup) costs nothing. One with a
// network (a draft model, an EAGLE head, an MTP layer: DraftSetup::network) runs, as vLLM
// does, one pass over the step's prompt chunks (the draft needs their KV or hidden states
// too) and the last token of each decoding request, then one more decode pass per further
// draft position over the requests that propose, each at a context one token longer; all
// priced by `network`'s cost model on the same GPUs.
class Proposer {
 public:
  Proposer() = default;  // no network
  explicit Proposer(std::unique_ptr<IExecutionTimeModel> network) : network_(std::move(network)) {}

  double propose_s(const BatchPlan& plan) const;
  bool has_network() const { return network_ != nullptr; }

 private:
  std::unique_ptr<IExecutionTimeModel> network_;
};

}  // namespace servesim
