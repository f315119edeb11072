#pragma once

#include <cstdint>

#include "sim/scheduler/batch_scheduler.h"

namespace servesim {

struct SarathiSchedulerOptions {
  std::int64_t token_budget = 512;  // tokens computed in one iteration at most
  std::int64_t max_num_seqs = 256;  // running requests at most
  // TensorRT-LLM's batch waiting (below); both 0: off.
  std::int64_t batch_wait_timeout_iters = 0;
  double batch_wait_max_tokens_ratio = 0;
};

// Sarathi-Serve's stall-free batching (OSDI 2024): every iteration computes at most
// `token_budget` tokens. Decodes come first, one token for each running request that has
// finished its prefill, so a long prompt never stalls them; the leftover budget goes to
// prefills first-come first-served, cut into chunks: partially prefilled running requests
// continue first, then waiting requests are admitted holding their first chunk. A chunk
// that does not end the prompt samples nothing. A request preempted by recompute
// re-prefills its prompt and generated tokens the same way, in chunks.
//
// A waiting request is admitted only while its whole prefill fits next to what is held
// (vLLM checks the whole prompt too), though the allocator takes only the first chunk: a
// request admitted on the room for one chunk would soon stall for the next. When a request
// cannot grow by its decode token or next chunk, the newest running request is preempted
// by recompute (vLLM's rule); an iteration that had to preempt, or whose oldest unfinished
// prefill found no memory, admits nobody new. With a budget smaller than the number of
// decoding requests the oldest ones decode and the rest wait an iteration.
//
// Works with any allocator: chunks grow an admitted sequence, which a contiguous region
// reserved for the final length always allows, and paged allocation takes block by block.
//
// Batch waiting (TensorRT-LLM's PyTorch executor, PyExecutor._waiting_requests, with either
// batch_wait_timeout_iters or batch_wait_max_tokens_ratio above 0): in a plan that decodes
// someone and would admit new prompts, the admissions are held back, so that prompts gather
// into fewer, larger context batches, until either the plan has held them back
// batch_wait_timeout_iters times in a row or its tokens (decodes, continued chunks and the
// waiting prompts it would take, within the seats and the budget) reach
// batch_wait_max_tokens_ratio x token_budget; then it admits and the count starts again.
// As in TensorRT-LLM, a plan without decodes never waits, and a condition whose parameter
// is 0 holds at once (so waiting needs both above 0).
class SarathiScheduler final : public QueueingScheduler {
 public:
  explicit SarathiScheduler(const SarathiSchedulerOptions& options);

  // No prefill limit: chunking lets any prompt through the budget.
  std::optional<std::string> reject_reason(const RequestSpec& request,
                                           const IKvCacheAllocator& allocator) const override;
  void plan(IKvCacheAllocator& allocator, BatchPlan& plan) override;
  BatchBudget budget() const override {
    return {options_.token_budget, options_.token_budget, options_.max_num_seqs};
  }
  // A plan that decodes every running request had budget for all of them, and admissions
  // wait on seats and memory, neither of which frees while nobody leaves.
  // Not with batch waiting: a plan that held prompts back admits them a few plans later.
  bool decode_plans_repeat() const override { return !waits(); }

 private:
  void schedule_decodes(IKvCacheAllocator& allocator, BatchPlan& plan, std::int64_t& budget);
  // Returns false when the oldest unfinished prefill found no memory for its chunk.
  bool continue_prefills(IKvCacheAllocator& allocator, BatchPlan& plan, std::int64_t& budget);
  void admit_prefills(IKvCacheAllocator& allocator, BatchPlan& plan, std::int64_t budget);
  bool waits() const {
    return options_.batch_wait_timeout_iters > 0 || options_.batch_wait_max_tokens_ratio > 0;
  }
  // Batch waiting: whether this plan holds its admissions back (and counts it).
  bool holds_back_prompts(const IKvCacheAllocator& allocator, const BatchPlan& plan,
                          std::int64_t budget);

  SarathiSchedulerOptions options_;
  std::int64_t plans_waited_ = 0;  // plans in a row that held prompts back
};

}  // namespace servesim
