#pragma once

#include "sim/memory/kv_cache_allocator.h"
#include "sim/scheduler/batch_plan.h"
#include "sim/scheduler/request_queues.h"

namespace servesim {

// The running request served last (the end of the queue order) that is neither in flight
// nor already in the plan being formed, or nullptr: vLLM's choice of victim.
Request* newest_preemptible(const RequestQueues& queues, const BatchPlan& plan);

// Preempts by swap when the replica has swap space for the request's KV tokens (copying
// them to host memory), and otherwise by recompute: its KV memory is dropped and it goes
// back among the waiting requests, to re-prefill its prompt and generated tokens.
void preempt(Request* request, RequestQueues& queues, IKvCacheAllocator& allocator,
             BatchPlan& plan);

// A running request whose KV memory is gone leaves the running queue and waits to
// recompute its prompt and generated tokens: preemption by recompute, but for the memory.
void requeue_to_recompute(Request* request, RequestQueues& queues);

// Copies swapped requests back, in queue order, while the allocator can hold their KV; they
// rejoin the running requests and decode in this iteration. Stops at the first that does
// not fit, so no swapped request overtakes an earlier one.
void swap_in_in_order(RequestQueues& queues, IKvCacheAllocator& allocator, BatchPlan& plan);

}  // namespace servesim
