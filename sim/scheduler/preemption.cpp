#include "sim/scheduler/preemption.h"

#include <algorithm>

#include "sim/scheduler/request_lifecycle.h"

namespace servesim {

Request* newest_preemptible(const RequestQueues& queues, const BatchPlan& plan) {
  // From the end of the queue: plans take requests from its front, so the first candidate
  // almost always stands, and the search costs O(running + planned).
  const std::vector<Request*>& running = queues.running();
  for (auto it = running.rbegin(); it != running.rend(); ++it) {
    Request* candidate = *it;
    if (candidate->in_flight) continue;
    const bool planned =
        std::any_of(plan.work.begin(), plan.work.end(),
                    [&](const ScheduledWork& w) { return w.request == candidate; });
    if (!planned) return candidate;
  }
  return nullptr;
}

void requeue_to_recompute(Request* request, RequestQueues& queues) {
  queues.remove_running(request);
  preempt_by_recompute(*request);
  queues.enqueue(request);
}

void preempt(Request* request, RequestQueues& queues, IKvCacheAllocator& allocator,
             BatchPlan& plan) {
  SwapSpace& swap = queues.swap();
  allocator.release(request->spec.id);
  plan.preempted.push_back(request);
  // A request in the middle of its prefill has nothing worth copying.
  const std::int64_t kv_tokens = request->computed_tokens;
  if (request->prefilling() || swap.capacity_tokens - swap.used_tokens < kv_tokens) {
    requeue_to_recompute(request, queues);
    return;
  }
  queues.remove_running(request);
  swap.used_tokens += kv_tokens;
  plan.swap_out_tokens += kv_tokens;
  preempt_by_swap(*request);
  queues.park_swapped(request);
}

void swap_in_in_order(RequestQueues& queues, IKvCacheAllocator& allocator, BatchPlan& plan) {
  while (!queues.swapped().empty()) {
    const Request* next = queues.swapped().front();
    // Room for its KV plus the token it decodes next.
    if (!allocator.can_admit(next->computed_tokens + 1, next->final_tokens())) break;
    Request* request = queues.pop_swapped();
    allocator.admit(request->spec.id, request->computed_tokens, request->final_tokens());
    queues.swap().used_tokens -= request->computed_tokens;
    plan.swap_in_tokens += request->computed_tokens;
    resume_from_swap(*request);
    queues.add_running(request);
  }
}

}  // namespace servesim
