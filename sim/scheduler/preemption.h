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

// Preempts by swap when the replica has swap space for the request's KV tokens (copying
// them to host memory), and by recompute otherwise.
void preempt(Request* request, RequestQueues& queues, IKvCacheAllocator& allocator,
             BatchPlan& plan);

// Copies swapped requests back, oldest first, while the allocator can hold their KV; they
// rejoin the running requests and decode in this iteration. Stops at the first that does
// not fit, so no swapped request overtakes an older one.
void swap_in_in_order(RequestQueues& queues, IKvCacheAllocator& allocator, BatchPlan& plan);

}  // namespace servesim
