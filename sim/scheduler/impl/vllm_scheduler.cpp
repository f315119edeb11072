#include "sim/scheduler/impl/vllm_scheduler.h"

#include "sim/core/error.h"
#include "sim/scheduler/preemption.h"
#include "sim/scheduler/running_requests.h"

namespace servesim {

VllmScheduler::VllmScheduler(const VllmSchedulerOptions& options) : options_(options) {
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

void VllmScheduler::plan(RequestQueues& queues, IKvCacheAllocator& allocator, BatchPlan& plan) {
  // Swapped requests resume before any new prompt is admitted, as in vLLM.
  const bool had_swapped = !queues.swapped.empty();
  swap_in_in_order(queues, allocator, plan);
  if (!had_swapped) admit_prefills(queues, allocator, plan);
  if (plan.empty()) decode_running_oldest_first(queues, allocator, plan, scratch_);
}

void VllmScheduler::admit_prefills(RequestQueues& queues, IKvCacheAllocator& allocator,
                                   BatchPlan& plan) const {
  admit_whole_prompts_in_order(queues, allocator, plan, options_.max_num_batched_tokens,
                               options_.max_num_seqs);
}

}  // namespace servesim
