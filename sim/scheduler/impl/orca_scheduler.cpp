#include "sim/scheduler/impl/orca_scheduler.h"

#include "sim/core/error.h"
#include "sim/scheduler/reject_reasons.h"
#include "sim/scheduler/running_requests.h"

namespace servesim {

OrcaScheduler::OrcaScheduler(const OrcaSchedulerOptions& options) : options_(options) {
  if (options.max_batch_size < 1) {
    throw InputError("scheduler.max_batch_size",
                     "expected at least 1 request, got " + std::to_string(options.max_batch_size));
  }
  if (options.max_num_batched_tokens < 1) {
    throw InputError(
        "scheduler.max_num_batched_tokens",
        "expected at least 1 token, got " + std::to_string(options.max_num_batched_tokens));
  }
}

std::optional<std::string> OrcaScheduler::reject_reason(const RequestSpec& request,
                                                        const IKvCacheAllocator& allocator) const {
  if (auto reason = prefill_limit_reject_reason(request, options_.max_num_batched_tokens,
                                                "max_num_batched_tokens")) {
    return reason;
  }
  return kv_capacity_reject_reason(request, allocator);
}

void OrcaScheduler::plan(IKvCacheAllocator& allocator, BatchPlan& plan) {
  decode_running_in_order(queues_, allocator, plan, scratch_);
  if (plan.preempted.empty()) admit_prefills(allocator, plan);
}

void OrcaScheduler::admit_prefills(IKvCacheAllocator& allocator, BatchPlan& plan) {
  admit_whole_prompts_in_order(queues_, allocator, plan, options_.max_num_batched_tokens,
                               options_.max_batch_size);
}

}  // namespace servesim
