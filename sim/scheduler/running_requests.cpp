#include "sim/scheduler/running_requests.h"

#include <algorithm>

#include "sim/scheduler/preemption.h"

namespace servesim {

std::vector<Request*> schedulable_oldest_first(const RequestQueues& queues) {
  std::vector<Request*> out;
  out.reserve(queues.running.size());
  for (Request* request : queues.running) {
    if (!request->in_flight) out.push_back(request);
  }
  const auto by_id = [](const Request* a, const Request* b) { return a->spec.id < b->spec.id; };
  // Usually sorted already: requests join at the back in arrival order.
  if (!std::is_sorted(out.begin(), out.end(), by_id)) std::sort(out.begin(), out.end(), by_id);
  return out;
}

namespace {

bool any_in_flight(const RequestQueues& queues) {
  return std::any_of(queues.running.begin(), queues.running.end(),
                     [](const Request* request) { return request->in_flight; });
}

}  // namespace

GrowthOutcome grow_or_preempt(Request* request, std::int64_t tokens, RequestQueues& queues,
                              IKvCacheAllocator& allocator, BatchPlan& plan) {
  if (allocator.try_grow(request->spec.id, tokens)) return GrowthOutcome::Grown;
  if (any_in_flight(queues)) return GrowthOutcome::NoRoom;
  while (!allocator.can_grow(request->spec.id, tokens)) {
    Request* victim = newest_preemptible(queues, plan);
    if (victim == nullptr) return GrowthOutcome::NoRoom;
    preempt(victim, queues, allocator, plan);
    if (victim == request) return GrowthOutcome::PreemptedSelf;
  }
  allocator.grow(request->spec.id, tokens);
  return GrowthOutcome::Grown;
}

void admit_whole_prompts_in_order(RequestQueues& queues, IKvCacheAllocator& allocator,
                                  BatchPlan& plan, std::int64_t token_budget,
                                  std::int64_t max_running) {
  while (!queues.waiting.empty()) {
    Request* request = queues.waiting.front();
    const std::int64_t tokens = request->prefill_target();
    if (tokens > token_budget) break;
    if (static_cast<std::int64_t>(queues.running.size()) >= max_running) break;
    if (!allocator.can_admit(tokens, request->final_tokens())) break;
    allocator.admit(request->spec.id, tokens, request->final_tokens());
    queues.waiting.pop_front();
    queues.running.push_back(request);
    plan.add_prefill(request, tokens);
    token_budget -= tokens;
  }
}

}  // namespace servesim
