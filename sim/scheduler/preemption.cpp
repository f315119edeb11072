#include "sim/scheduler/preemption.h"

#include <algorithm>

namespace servesim {
namespace {

void preempt_by_recompute(Request* request, RequestQueues& queues, IKvCacheAllocator& allocator,
                          BatchPlan& plan) {
  allocator.release(request->spec.id);
  request->kv_tokens = 0;
  request->prefilling = true;
  request->preemptions += 1;
  queues.remove_running(request);
  // Keep the waiting queue in arrival order: the victim is older than any new arrival.
  const auto position =
      std::find_if(queues.waiting.begin(), queues.waiting.end(),
                   [&](const Request* waiting) { return waiting->spec.id > request->spec.id; });
  queues.waiting.insert(position, request);
  plan.preempted.push_back(request);
}

}  // namespace

Request* newest_preemptible(const RequestQueues& queues, const BatchPlan& plan) {
  // The newest request not in flight, then the next newest while the plan holds it: plans
  // take the oldest first, so the first answer almost always stands, and the search costs
  // O(running + planned) rather than O(running x planned).
  const Request* below = nullptr;
  for (;;) {
    Request* newest = nullptr;
    for (Request* candidate : queues.running) {
      if (candidate->in_flight) continue;
      if (below != nullptr && candidate->spec.id >= below->spec.id) continue;
      if (newest == nullptr || candidate->spec.id > newest->spec.id) newest = candidate;
    }
    if (newest == nullptr) return nullptr;
    const bool planned = std::any_of(plan.work.begin(), plan.work.end(),
                                     [&](const ScheduledWork& w) { return w.request == newest; });
    if (!planned) return newest;
    below = newest;
  }
}

void preempt(Request* request, RequestQueues& queues, IKvCacheAllocator& allocator,
             BatchPlan& plan) {
  SwapSpace& swap = queues.swap;
  if (request->prefilling || swap.capacity_tokens - swap.used_tokens < request->kv_tokens) {
    // A request in the middle of its prefill has nothing worth copying.
    preempt_by_recompute(request, queues, allocator, plan);
    return;
  }
  allocator.release(request->spec.id);
  swap.used_tokens += request->kv_tokens;
  plan.swap_out_tokens += request->kv_tokens;
  request->swapped = true;
  request->preemptions += 1;
  queues.remove_running(request);
  const auto position =
      std::find_if(queues.swapped.begin(), queues.swapped.end(),
                   [&](const Request* swapped) { return swapped->spec.id > request->spec.id; });
  queues.swapped.insert(position, request);
  plan.preempted.push_back(request);
}

void swap_in_in_order(RequestQueues& queues, IKvCacheAllocator& allocator, BatchPlan& plan) {
  while (!queues.swapped.empty()) {
    Request* request = queues.swapped.front();
    // Room for its KV plus the token it decodes next.
    if (!allocator.can_admit(request->kv_tokens + 1, request->final_tokens())) break;
    allocator.admit(request->spec.id, request->kv_tokens, request->final_tokens());
    queues.swap.used_tokens -= request->kv_tokens;
    plan.swap_in_tokens += request->kv_tokens;
    request->swapped = false;
    queues.swapped.pop_front();
    queues.add_running(request);
  }
}

}  // namespace servesim
