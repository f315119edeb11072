#include "sim/scheduler/preemption.h"

#include <algorithm>

namespace servesim {

Request* newest_preemptible(const RequestQueues& queues, const BatchPlan& plan) {
  Request* newest = nullptr;
  for (Request* candidate : queues.running) {
    if (candidate->in_flight) continue;
    if (newest != nullptr && candidate->spec.id < newest->spec.id) continue;
    const bool planned =
        std::any_of(plan.work.begin(), plan.work.end(),
                    [&](const ScheduledWork& w) { return w.request == candidate; });
    if (!planned) newest = candidate;
  }
  return newest;
}

void preempt_by_recompute(Request* request, RequestQueues& queues, IKvCacheAllocator& allocator,
                          BatchPlan& plan) {
  allocator.release(request->spec.id);
  request->kv_tokens = 0;
  request->prefilling = true;
  request->preemptions += 1;
  queues.running.erase(std::find(queues.running.begin(), queues.running.end(), request));
  // Keep the waiting queue in arrival order: the victim is older than any new arrival.
  const auto position =
      std::find_if(queues.waiting.begin(), queues.waiting.end(),
                   [&](const Request* waiting) { return waiting->spec.id > request->spec.id; });
  queues.waiting.insert(position, request);
  plan.preempted.push_back(request);
}

}  // namespace servesim
