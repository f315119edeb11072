#pragma once

#include <optional>
#include <string>

#include "sim/memory/kv_cache_allocator.h"
#include "sim/scheduler/batch_plan.h"

namespace servesim {

// Forms the next batch of one replica. A policy decides who joins, how many tokens each
// computes and who is preempted; because each decision depends on the memory the previous
// one took, plan() applies them as it goes: it moves requests between the queues and takes
// or releases KV memory through the allocator. It never schedules events or emits tokens:
// the replica runs the batch and applies its results.
class IBatchScheduler {
 public:
  virtual ~IBatchScheduler() = default;

  // Why a request can never be served by this policy on this allocator, or nullopt.
  virtual std::optional<std::string> reject_reason(const RequestSpec& request,
                                                   const IKvCacheAllocator& allocator) const = 0;
  // Requests marked in_flight are busy in an earlier batch and must be left alone.
  virtual BatchPlan plan(RequestQueues& queues, IKvCacheAllocator& allocator) = 0;
};

}  // namespace servesim
