#pragma once

#include <cstdint>

#include "sim/scheduler/batch_scheduler.h"

namespace servesim {

struct SarathiSchedulerOptions {
  std::int64_t token_budget = 512;  // tokens computed in one iteration at most
  std::int64_t max_num_seqs = 256;  // running requests at most
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
  bool decode_plans_repeat() const override { return true; }

 private:
  void schedule_decodes(IKvCacheAllocator& allocator, BatchPlan& plan, std::int64_t& budget);
  // Returns false when the oldest unfinished prefill found no memory for its chunk.
  bool continue_prefills(IKvCacheAllocator& allocator, BatchPlan& plan, std::int64_t& budget);
  void admit_prefills(IKvCacheAllocator& allocator, BatchPlan& plan, std::int64_t budget);

  SarathiSchedulerOptions options_;
};

}  // namespace servesim
