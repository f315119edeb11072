#include "sim/scheduler/impl/sarathi_scheduler.h"

#include <algorithm>

#include "sim/core/error.h"
#include "sim/scheduler/reject_reasons.h"
#include "sim/scheduler/running_requests.h"

namespace servesim {

SarathiScheduler::SarathiScheduler(const SarathiSchedulerOptions& options) : options_(options) {
  if (options.token_budget < 1) {
    throw InputError("scheduler.token_budget",
                     "expected at least 1 token, got " + std::to_string(options.token_budget));
  }
  if (options.max_num_seqs < 1) {
    throw InputError("scheduler.max_num_seqs",
                     "expected at least 1 sequence, got " + std::to_string(options.max_num_seqs));
  }
}

std::optional<std::string> SarathiScheduler::reject_reason(
    const RequestSpec& request, const IKvCacheAllocator& allocator) const {
  return kv_capacity_reject_reason(request, allocator);
}

void SarathiScheduler::plan(RequestQueues& queues, IKvCacheAllocator& allocator, BatchPlan& plan) {
  std::int64_t budget = options_.token_budget;
  schedule_decodes(queues, allocator, plan, budget);
  const bool prefills_fit = continue_prefills(queues, allocator, plan, budget);
  if (prefills_fit && plan.preempted.empty()) admit_prefills(queues, allocator, plan, budget);
}

void SarathiScheduler::schedule_decodes(RequestQueues& queues, IKvCacheAllocator& allocator,
                                        BatchPlan& plan, std::int64_t& budget) {
  for_each_schedulable_oldest_first(queues, [&](Request* request) {
    if (budget == 0) return false;
    if (!request->prefilling &&
        grow_or_preempt(request, 1, queues, allocator, plan) == GrowthOutcome::Grown) {
      plan.add_decode(request);
      budget -= 1;
    }
    return true;
  });
}

bool SarathiScheduler::continue_prefills(RequestQueues& queues, IKvCacheAllocator& allocator,
                                         BatchPlan& plan, std::int64_t& budget) {
  bool all_fit = true;
  for_each_schedulable_oldest_first(queues, [&](Request* request) {
    if (budget == 0) return false;
    if (!request->prefilling) return true;
    const std::int64_t chunk = std::min(request->prefill_target() - request->kv_tokens, budget);
    // Growing the allocator leaves kv_tokens alone (the replica adds the chunk when the
    // batch completes), so add_prefill below still sees the tokens cached before the chunk.
    if (grow_or_preempt(request, chunk, queues, allocator, plan) != GrowthOutcome::Grown) {
      // First come, first served: newer prefills wait behind the oldest one.
      all_fit = false;
      return false;
    }
    plan.add_prefill(request, chunk);
    budget -= chunk;
    return true;
  });
  return all_fit;
}

void SarathiScheduler::admit_prefills(RequestQueues& queues, IKvCacheAllocator& allocator,
                                      BatchPlan& plan, std::int64_t budget) const {
  while (budget > 0 && !queues.waiting.empty()) {
    if (static_cast<std::int64_t>(queues.running.size()) >= options_.max_num_seqs) return;
    Request* request = queues.waiting.front();
    const std::int64_t chunk = std::min(request->prefill_target(), budget);
    // Room for the whole prefill, and for the admission made: a contiguous reservation
    // may depend on how many tokens the sequence holds when admitted.
    if (!allocator.can_admit(request->prefill_target(), request->final_tokens())) return;
    if (!allocator.can_admit(chunk, request->final_tokens())) return;
    allocator.admit(request->spec.id, chunk, request->final_tokens());
    queues.waiting.pop_front();
    queues.add_running(request);
    plan.add_prefill(request, chunk);
    budget -= chunk;
  }
}

}  // namespace servesim
