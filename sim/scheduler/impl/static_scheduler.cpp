#include "sim/scheduler/impl/static_scheduler.h"

#include <deque>
#include <vector>

#include "sim/core/error.h"
#include "sim/scheduler/reject_reasons.h"
#include "sim/scheduler/running_requests.h"

namespace servesim {

StaticScheduler::StaticScheduler(const StaticSchedulerOptions& options) : options_(options) {
  if (options.batch_size < 1) {
    throw InputError("scheduler.batch_size",
                     "expected at least 1 request, got " + std::to_string(options.batch_size));
  }
}

std::optional<std::string> StaticScheduler::reject_reason(
    const RequestSpec& request, const IKvCacheAllocator& allocator) const {
  return kv_capacity_reject_reason(request, allocator);
}

void StaticScheduler::plan(IKvCacheAllocator& allocator, BatchPlan& plan) {
  // Only batch members ever run, and the replica retires each as it finishes, so an empty
  // running list is exactly "the last batch is over".
  if (queues_.running().empty()) {
    form_batch(allocator, plan);
  } else {
    schedule_decodes(allocator, plan);
  }
}

void StaticScheduler::form_batch(IKvCacheAllocator& allocator, BatchPlan& plan) {
  const std::deque<Request*>& waiting = queues_.waiting();
  std::vector<Request*> members;
  while (static_cast<std::int64_t>(members.size()) < options_.batch_size &&
         members.size() < waiting.size()) {
    Request* request = waiting[members.size()];
    const std::int64_t id = request->spec.id;
    const std::int64_t tokens = request->tokens();
    const std::int64_t growth = request->final_tokens() - tokens;
    if (!allocator.can_admit(tokens, request->final_tokens())) break;
    allocator.admit(id, tokens, request->final_tokens());  // a trial, undone below
    if (!allocator.can_grow(id, growth)) {
      allocator.release(id);
      break;
    }
    allocator.grow(id, growth);
    members.push_back(request);
  }
  if (members.empty() && !waiting.empty() && allocator.sequences() == 0) {
    // reject_reason should have turned it away: nothing would ever run again.
    throw InvariantError("static scheduler: request " + std::to_string(waiting.front()->spec.id) +
                         " cannot reach its final length even in an empty KV cache");
  }
  // The allocator must hold exactly the tokens in the cache, so the trial ends before the
  // plan is returned. The real admissions repeat the trial's, in the same order into the
  // same empty cache, only without the growth: they need no more room than it took.
  for (Request* request : members)
    allocator.release(request->spec.id);
  for (const Request* request : members)
    admit_first_waiting(queues_, allocator, plan, request->tokens());
}

void StaticScheduler::schedule_decodes(IKvCacheAllocator& allocator, BatchPlan& plan) {
  for (Request* request : queues_.running()) {
    if (request->in_flight || request->prefilling()) continue;
    if (!allocator.can_grow(request->spec.id, 1)) {
      throw InvariantError("static scheduler: request " + std::to_string(request->spec.id) +
                           " cannot grow although its batch was admitted at final length");
    }
    allocator.grow(request->spec.id, 1);
    plan.add_decode(request);
  }
}

}  // namespace servesim
