#pragma once

#include <cstdint>

#include "sim/scheduler/batch_scheduler.h"
#include "sim/scheduler/running_requests.h"

namespace servesim {

struct VllmV1SchedulerOptions {
  std::int64_t max_num_seqs = 1024;            // running requests at most
  std::int64_t max_num_batched_tokens = 8192;  // tokens computed in one step at most
  // Tokens one request computes in one step at most; 0: no limit (vLLM's 0).
  std::int64_t long_prefill_token_threshold = 0;
  // Plans a step in which every running request decodes with the allocator's batch growth
  // (decode_running_in_order) instead of one request at a time: the same plan, faster.
  bool batch_decodes = true;
  // Drafts a decoding request proposes per step (speculative decoding); 0: none. Set by
  // speculate(), not a scheduler parameter: it is the run's `speculative` section.
  std::int64_t num_speculative_tokens = 0;
};

// vLLM's V1 scheduler (vllm/v1/core/sched/scheduler.py, Scheduler.schedule, as of 0.15):
// there is no prefill or decode phase, only each request's computed tokens catching up with
// its tokens. Every step has one budget of max_num_batched_tokens. Running requests take it
// first, in queue order, each min(its uncomputed tokens, long_prefill_token_threshold,
// what is left): a decoding request 1 token, a prefill in progress its next chunk; the walk
// stops when the budget is spent. Then, unless this step preempted, waiting requests are
// admitted first come first served while fewer than max_num_seqs run, each holding a first
// chunk of the same size rule; chunked prefill is always on. The walk stops at the first
// request the allocator cannot take, so nobody overtakes (vLLM allocates the blocks of the
// scheduled tokens only, so that is the chunk, not the whole prompt as sarathi checks).
//
// When a running request's tokens find no free block, the newest running request (the end
// of the queue) is preempted by recompute, again until the tokens fit; when the request
// itself was the newest, it goes back to waiting and the walk over the running requests
// stops, as vLLM's does. vLLM V1 always recomputes; there is no swap.
//
// Declared for the paged allocator, vLLM's, only. The mechanics (chunks growing an admitted
// sequence) would run on contiguous reservations too, as sarathi's do, but no vLLM does that.
class VllmV1Scheduler final : public QueueingScheduler {
 public:
  explicit VllmV1Scheduler(const VllmV1SchedulerOptions& options);

  // No prefill limit: a preempted request re-prefills in chunks like any prompt.
  std::optional<std::string> reject_reason(const RequestSpec& request,
                                           const IKvCacheAllocator& allocator) const override;
  void plan(IKvCacheAllocator& allocator, BatchPlan& plan) override;
  BatchBudget budget() const override {
    return {options_.max_num_batched_tokens, options_.max_num_batched_tokens,
            options_.max_num_seqs};
  }
  // After a plan that only decoded every running request, the same plan again spends the
  // same budget on the same decodes and leaves the same remainder to the same waiting
  // head: an admission that failed for lack of a seat, of budget or of memory fails again
  // while nobody leaves and memory only fills.
  bool decode_plans_repeat() const override { return options_.num_speculative_tokens == 0; }
  // A step that preempted admits nobody; the step after it tries. When that admission would
  // fail as things stand after this step, it fails in every later step of the same decodes
  // too (memory only fills), so the preempting plan repeats as well.
  bool last_plan_repeats() const override { return last_plan_repeats_; }
  // A plan that admitted its last waiting requests within its budget, or finished a prompt
  // chunked over earlier steps: the next plan's admission of the waiting head has the budget
  // the chunks no longer take, and is judged with it as things stand after this plan (memory
  // then only fills). A head with content or a remote prefix is not judged.
  bool last_plan_then_decodes() const override { return last_plan_then_decodes_; }
  bool judges_preempting_plans() const override { return true; }
  // Admission stops at the waiting queue's head, whoever queues behind it.
  bool queues_behind_waiting(const Request& request) const override {
    return !queues_.waiting().empty() && order_.before(*queues_.waiting().front(), request);
  }
  // A preempting round's plan admits nobody; it repeats when the next plan's admission of
  // the waiting head, the first in queue order of the waiting requests and the victims,
  // fails for its seat, budget or memory (as last_plan_repeats judges a preempting plan).
  // A head with content or a remote prefix is not judged (its look-up may change).
  bool repeats_after_preempting(std::span<Request* const> victims, std::int64_t rounds,
                                std::int64_t batch, std::int64_t admissible_tokens) const override;
  // They go back to waiting, to recompute, as preempt() sends them.
  void preempted_in_run(std::span<Request* const> victims) override;
  // A decoding request then schedules 1 + its drafts (plan_speculative_decode), as vLLM's
  // scheduler schedules a request's spec tokens within the same token budget.
  bool speculate(std::int64_t num_speculative_tokens) override {
    options_.num_speculative_tokens = num_speculative_tokens;
    return true;
  }

 private:
  // The tokens a request computes next: its uncomputed ones (less `cached`, those a waiting
  // request finds in the prefix cache), cut to the threshold and the budget left.
  std::int64_t next_tokens(const Request& request, std::int64_t budget,
                           std::int64_t cached = 0) const {
    return chunk_of(request.uncomputed_tokens() - cached, budget);
  }
  // `tokens` to compute, cut to the threshold and `budget`.
  std::int64_t chunk_of(std::int64_t tokens, std::int64_t budget) const;
  // Returns false when a running request could not get memory without preempting itself
  // or, with batches in flight, at all.
  bool schedule_running(IKvCacheAllocator& allocator, BatchPlan& plan, std::int64_t& budget);
  void admit_waiting(IKvCacheAllocator& allocator, BatchPlan& plan, std::int64_t budget);
  // How the waiting queue's head would be admitted with `budget` left: holding `tokens` (its
  // cached prefix and first chunk), computing `chunk` of them; tokens 0: it would not be (no
  // head, no budget, no seat or no memory).
  struct Admission {
    std::int64_t tokens = 0;
    std::int64_t chunk = 0;
  };
  Admission head_admission(const IKvCacheAllocator& allocator, std::int64_t budget) const;
  // Whether a waiting head's admission can be judged ahead of the plan that tries it: not
  // with content or a remote prefix, whose look-up may change by then.
  static bool judgeable(const Request& head) {
    return !head.has_content && head.remote_kv_tokens == 0;
  }
  // Whether the waiting head, judged, would not be admitted by a plan that decodes every
  // running request, with the allocator as it is now (last_plan_then_decodes).
  bool next_admission_fails(const IKvCacheAllocator& allocator) const;

  VllmV1SchedulerOptions options_;
  DecodeScratch scratch_;
  bool last_plan_repeats_ = true;
  bool last_plan_then_decodes_ = false;
};

}  // namespace servesim
