#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "sim/memory/kv_cache_allocator.h"
#include "sim/scheduler/batch_plan.h"

namespace servesim {

// The running requests a plan may touch (not in flight), oldest first. A request preempted
// and re-admitted sits behind newer ones in `running`, so list order is not arrival order;
// walking a copy also keeps the walk valid while preemption erases from `running`.
std::vector<Request*> schedulable_oldest_first(const RequestQueues& queues);

// True when `request` was preempted while forming `plan`: it then waits, and a walk over a
// copy of the running list must skip it.
inline bool preempted_in(const BatchPlan& plan, const Request* request) {
  return std::find(plan.preempted.begin(), plan.preempted.end(), request) != plan.preempted.end();
}

enum class GrowthOutcome {
  Grown,          // the allocator now holds `tokens` more tokens for the request
  PreemptedSelf,  // the request was the newest preemptible one and went back to waiting
  NoRoom,         // it keeps its memory and waits for batches in flight
};

// Makes room for `tokens` more tokens of a running request, preempting the newest
// preemptible running requests by recompute while the allocator cannot grow it (vLLM's
// rule), and grows it. Requests already in `plan` are never victims, so granted work stands.
// While a batch is in flight (pipeline parallelism) a request that cannot grow waits
// instead, keeping its memory: its in-flight neighbours cannot be victims, they may free
// memory when they complete, and preempting some requests without winning the room would
// leave a plan of preemptions and no work. Plans that launch nothing let the pipeline
// drain, after which the rule above applies again, so waiting never deadlocks.
// Admits waiting requests first-come first-served, each with its whole prompt (prompt plus
// generated tokens after a preemption), while the prompt tokens fit `token_budget`, fewer
// than `max_running` requests run and the allocator can admit them; stops at the first that
// does not fit, so no request overtakes an older one.
void admit_whole_prompts_in_order(RequestQueues& queues, IKvCacheAllocator& allocator,
                                  BatchPlan& plan, std::int64_t token_budget,
                                  std::int64_t max_running);

GrowthOutcome grow_or_preempt(Request* request, std::int64_t tokens, RequestQueues& queues,
                              IKvCacheAllocator& allocator, BatchPlan& plan);

}  // namespace servesim
