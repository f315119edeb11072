#pragma once

#include "sim/memory/kv_cache_allocator.h"
#include "sim/scheduler/batch_plan.h"

namespace servesim {

// The most recently arrived running request that is neither in flight nor already in the
// plan being formed, or nullptr: vLLM's choice of victim.
Request* newest_preemptible(const RequestQueues& queues, const BatchPlan& plan);

// Drops the request's KV memory and puts it back at the head of the waiting queue, so that
// it re-prefills its prompt and generated tokens when memory allows.
void preempt_by_recompute(Request* request, RequestQueues& queues, IKvCacheAllocator& allocator,
                          BatchPlan& plan);

}  // namespace servesim
