#include "sim/scheduler/impl/vllm_scheduler.h"

#include "sim/core/error.h"
#include "sim/scheduler/preemption.h"
#include "sim/scheduler/running_requests.h"

namespace servesim {

VllmScheduler::VllmScheduler(const VllmSchedulerOptions& options, std::int64_t swap_capacity_tokens)
    : QueueingScheduler(swap_capacity_tokens), options_(options) {
  if (options.max_num_seqs < 1) {
    throw InputError("scheduler.max_num_seqs", "expected at least 1 sequence");
  }
  if (options.max_num_batched_tokens < 1) {
    throw InputError("scheduler.max_num_batched_tokens", "expected at least 1 token");
  }
}

std::optional<std::string> VllmScheduler::reject_reason(const RequestSpec& request,
                                                        const IKvCacheAllocator& allocator) const {
  if (request.prompt_tokens + request.output_tokens > options_.max_num_batched_tokens) {
    // A preempted request re-prefills prompt and output so far in one iteration.
    return "prompt + output tokens (" +
           std::to_string(request.prompt_tokens + request.output_tokens) +
           ") exceed max_num_batched_tokens (" + std::to_string(options_.max_num_batched_tokens) +
           ")";
  }
  if (!allocator.fits_when_empty(request.prompt_tokens + request.output_tokens)) {
    return "prompt + output tokens (" +
           std::to_string(request.prompt_tokens + request.output_tokens) +
           ") exceed the replica's KV capacity (" + std::to_string(allocator.capacity_tokens()) +
           " tokens)";
  }
  return std::nullopt;
}

void VllmScheduler::plan(IKvCacheAllocator& allocator, BatchPlan& plan) {
  // Swapped requests resume before any new prompt is admitted, as in vLLM.
  const bool had_swapped = !queues_.swapped().empty();
  swap_in_in_order(queues_, allocator, plan);
  if (!had_swapped) admit_prefills(allocator, plan);
  if (plan.empty()) decode_running_in_order(queues_, allocator, plan, scratch_);
}

void VllmScheduler::admit_prefills(IKvCacheAllocator& allocator, BatchPlan& plan) {
  admit_whole_prompts_in_order(queues_, allocator, plan, options_.max_num_batched_tokens,
                               options_.max_num_seqs);
}

}  // namespace servesim
