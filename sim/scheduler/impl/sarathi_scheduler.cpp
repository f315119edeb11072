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
  if (options.batch_wait_timeout_iters < 0) {
    throw InputError(
        "scheduler.batch_wait_timeout_iters",
        "expected at least 0 plans, got " + std::to_string(options.batch_wait_timeout_iters));
  }
  if (!(options.batch_wait_max_tokens_ratio >= 0 && options.batch_wait_max_tokens_ratio <= 1)) {
    throw InputError("scheduler.batch_wait_max_tokens_ratio",
                     "expected a fraction in [0, 1], got " +
                         std::to_string(options.batch_wait_max_tokens_ratio));
  }
}

std::optional<std::string> SarathiScheduler::reject_reason(
    const RequestSpec& request, const IKvCacheAllocator& allocator) const {
  return kv_capacity_reject_reason(request, allocator);
}

void SarathiScheduler::plan(IKvCacheAllocator& allocator, BatchPlan& plan) {
  std::int64_t budget = options_.token_budget;
  schedule_decodes(allocator, plan, budget);
  const bool prefills_fit = continue_prefills(allocator, plan, budget);
  if (prefills_fit && plan.preempted.empty() && !holds_back_prompts(allocator, plan, budget)) {
    admit_prefills(allocator, plan, budget);
  }
}

bool SarathiScheduler::holds_back_prompts(const IKvCacheAllocator& allocator, const BatchPlan& plan,
                                          std::int64_t budget) {
  if (!waits() || queues_.waiting().empty()) return false;
  const bool decodes = std::any_of(plan.work.begin(), plan.work.end(),
                                   [](const ScheduledWork& w) { return !w.prefill; });
  if (!decodes) return false;
  // The tokens of the plan with the prompts it would admit (seats and budget allowing).
  std::int64_t tokens = options_.token_budget - budget;
  std::int64_t seats = options_.max_num_seqs - static_cast<std::int64_t>(queues_.running().size());
  for (const Request* request : queues_.waiting()) {
    if (seats <= 0 || budget <= 0) break;
    const std::int64_t uncached =
        request->tokens() - computed_at_admission(allocator, *request, prefix_key(*request));
    const std::int64_t chunk = std::min(uncached, budget);
    tokens += chunk;
    budget -= chunk;
    --seats;
  }
  const bool stop_waiting =
      plans_waited_ >= options_.batch_wait_timeout_iters ||
      static_cast<double>(tokens) >=
          options_.batch_wait_max_tokens_ratio * static_cast<double>(options_.token_budget);
  if (stop_waiting) {
    plans_waited_ = 0;
    return false;
  }
  ++plans_waited_;
  return true;
}

void SarathiScheduler::schedule_decodes(IKvCacheAllocator& allocator, BatchPlan& plan,
                                        std::int64_t& budget) {
  for_each_schedulable_in_order(queues_, [&](Request* request) {
    if (budget == 0) return false;
    if (!request->prefilling() &&
        grow_or_preempt(request, 1, queues_, allocator, plan) == GrowthOutcome::Grown) {
      plan.add_decode(request);
      budget -= 1;
    }
    return true;
  });
}

bool SarathiScheduler::continue_prefills(IKvCacheAllocator& allocator, BatchPlan& plan,
                                         std::int64_t& budget) {
  bool all_fit = true;
  for_each_schedulable_in_order(queues_, [&](Request* request) {
    if (budget == 0) return false;
    if (!request->prefilling()) return true;
    const std::int64_t chunk = std::min(request->uncomputed_tokens(), budget);
    // Growing the allocator leaves computed_tokens alone (the step completes with the
    // batch), so add_prefill below still sees the tokens cached before the chunk.
    if (grow_or_preempt(request, chunk, queues_, allocator, plan) != GrowthOutcome::Grown) {
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

void SarathiScheduler::admit_prefills(IKvCacheAllocator& allocator, BatchPlan& plan,
                                      std::int64_t budget) {
  while (budget > 0 && !queues_.waiting().empty()) {
    if (static_cast<std::int64_t>(queues_.running().size()) >= options_.max_num_seqs) return;
    const Request* request = queues_.waiting().front();
    // The chunk covers tokens the prefix cache does not hold.
    const PrefixKey key = prefix_key(*request);
    const std::int64_t cached = computed_at_admission(allocator, *request, key);
    const std::int64_t chunk = std::min(request->tokens() - cached, budget);
    // Room for the whole prefill, and for the admission made: a contiguous reservation
    // may depend on how many tokens the sequence holds when admitted.
    if (!allocator.can_admit_prefix(key, request->tokens(), request->final_tokens())) return;
    if (!allocator.can_admit_prefix(key, cached + chunk, request->final_tokens())) return;
    admit_first_waiting(queues_, allocator, plan, cached + chunk);
    budget -= chunk;
  }
}

}  // namespace servesim
