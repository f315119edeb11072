#include "sim/scheduler/impl/vllm_v1_scheduler.h"

#include <algorithm>

#include "sim/core/error.h"
#include "sim/scheduler/preemption.h"
#include "sim/scheduler/reject_reasons.h"
#include "sim/scheduler/running_requests.h"
#include "sim/scheduler/verification_planning.h"

namespace servesim {

VllmV1Scheduler::VllmV1Scheduler(const VllmV1SchedulerOptions& options) : options_(options) {
  if (options.max_num_seqs < 1) {
    throw InputError("scheduler.max_num_seqs",
                     "expected at least 1 sequence, got " + std::to_string(options.max_num_seqs));
  }
  // vLLM refuses a budget that cannot give every running request its decode token.
  if (options.max_num_batched_tokens < options.max_num_seqs) {
    throw InputError("scheduler.max_num_batched_tokens",
                     "expected at least max_num_seqs (" + std::to_string(options.max_num_seqs) +
                         ") tokens, got " + std::to_string(options.max_num_batched_tokens));
  }
  if (options.long_prefill_token_threshold < 0) {
    throw InputError("scheduler.long_prefill_token_threshold",
                     "expected 0 (no limit) or more tokens, got " +
                         std::to_string(options.long_prefill_token_threshold));
  }
}

std::optional<std::string> VllmV1Scheduler::reject_reason(
    const RequestSpec& request, const IKvCacheAllocator& allocator) const {
  return kv_capacity_reject_reason(request, allocator);
}

void VllmV1Scheduler::plan(IKvCacheAllocator& allocator, BatchPlan& plan) {
  std::int64_t budget = options_.max_num_batched_tokens;
  bool running_fit = true;
  // When every running request decodes (none in flight or prefilling), each takes one token
  // of a budget of at least max_num_seqs, and schedule_running's walk is the one
  // decode_running_in_order makes (batch_decodes).
  if (options_.batch_decodes && options_.num_speculative_tokens == 0 &&
      decode_running_in_order(queues_, allocator, plan, scratch_, /*only_if_all=*/true)) {
    budget -= static_cast<std::int64_t>(plan.work.size());
  } else {
    running_fit = schedule_running(allocator, plan, budget);
  }
  // vLLM admits nobody in a step that preempted.
  if (running_fit && plan.preempted.empty()) admit_waiting(allocator, plan, budget);
  last_plan_repeats_ =
      plan.preempted.empty() || (running_fit && head_admission(allocator, budget).tokens == 0);
  last_plan_then_decodes_ = plan.shape.prefill_sequences > 0 && plan.preempted.empty() &&
                            running_fit && next_admission_fails(allocator);
}

bool VllmV1Scheduler::next_admission_fails(const IKvCacheAllocator& allocator) const {
  if (queues_.waiting().empty()) return true;
  const Request& head = *queues_.waiting().front();
  if (!judgeable(head)) return false;
  // Every running request decodes one token in the next plan.
  const auto decodes = static_cast<std::int64_t>(queues_.running().size());
  return head_admission(allocator, options_.max_num_batched_tokens - decodes).tokens == 0;
}

std::int64_t VllmV1Scheduler::chunk_of(std::int64_t tokens, std::int64_t budget) const {
  if (options_.long_prefill_token_threshold > 0) {
    tokens = std::min(tokens, options_.long_prefill_token_threshold);
  }
  return std::min(tokens, budget);
}

bool VllmV1Scheduler::schedule_running(IKvCacheAllocator& allocator, BatchPlan& plan,
                                       std::int64_t& budget) {
  bool all_fit = true;
  for_each_schedulable_in_order(queues_, [&](Request* request) {
    if (budget == 0) return false;
    if (options_.num_speculative_tokens > 0 && !request->prefilling()) {
      const GrowthOutcome grown = plan_speculative_decode(request, options_.num_speculative_tokens,
                                                          budget, queues_, allocator, plan);
      if (grown != GrowthOutcome::Grown) all_fit = false;
      return grown == GrowthOutcome::Grown;
    }
    const std::int64_t tokens = next_tokens(*request, budget);
    // Growing the allocator leaves computed_tokens alone (the step completes with the
    // batch), so add_prefill below still sees the tokens cached before the chunk.
    if (grow_or_preempt(request, tokens, queues_, allocator, plan) != GrowthOutcome::Grown) {
      all_fit = false;
      return false;
    }
    if (request->prefilling()) {
      plan.add_prefill(request, tokens);
    } else {
      plan.add_decode(request);
    }
    budget -= tokens;
    return true;
  });
  return all_fit;
}

VllmV1Scheduler::Admission VllmV1Scheduler::head_admission(const IKvCacheAllocator& allocator,
                                                           std::int64_t budget) const {
  if (budget <= 0 || queues_.waiting().empty()) return {};
  if (static_cast<std::int64_t>(queues_.running().size()) >= options_.max_num_seqs) return {};
  const Request* request = queues_.waiting().front();
  // vLLM looks the prefix cache up before sizing the chunk: the chunk and the budget cover
  // the tokens it does not hold, and the hit blocks are held rather than allocated.
  const PrefixKey key = prefix_key(*request);
  const std::int64_t cached = computed_at_admission(allocator, *request, key);
  const std::int64_t chunk = next_tokens(*request, budget, cached);
  if (!allocator.can_admit_prefix(key, cached + chunk, request->final_tokens())) return {};
  return {cached + chunk, chunk};
}

bool VllmV1Scheduler::repeats_after_preempting(std::span<Request* const> victims,
                                               std::int64_t rounds, std::int64_t batch,
                                               std::int64_t admissible_tokens) const {
  if (options_.num_speculative_tokens > 0 || victims.empty()) return false;
  const std::int64_t budget = options_.max_num_batched_tokens - batch;
  if (budget <= 0 || batch >= options_.max_num_seqs) return true;
  const Request* head = victims.front();
  for (const Request* victim : victims) {
    if (order_.before(*victim, *head)) head = victim;
  }
  // A victim recomputes every token it has then, `rounds` more than now.
  std::int64_t uncomputed = head->tokens() + rounds;
  if (!queues_.waiting().empty() && order_.before(*queues_.waiting().front(), *head)) {
    head = queues_.waiting().front();
    uncomputed = head->uncomputed_tokens();
  }
  if (!judgeable(*head)) return false;
  return chunk_of(uncomputed, budget) > admissible_tokens;
}

void VllmV1Scheduler::preempted_in_run(std::span<Request* const> victims) {
  for (Request* victim : victims)
    requeue_to_recompute(victim, queues_);
}

void VllmV1Scheduler::admit_waiting(IKvCacheAllocator& allocator, BatchPlan& plan,
                                    std::int64_t budget) {
  for (Admission next = head_admission(allocator, budget); next.tokens > 0;
       next = head_admission(allocator, budget)) {
    admit_first_waiting(queues_, allocator, plan, next.tokens);
    budget -= next.chunk;
  }
}

}  // namespace servesim
