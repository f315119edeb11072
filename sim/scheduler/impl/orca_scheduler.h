#pragma once

#include <cstdint>

#include "sim/scheduler/batch_scheduler.h"
#include "sim/scheduler/running_requests.h"

namespace servesim {

struct OrcaSchedulerOptions {
  std::int64_t max_batch_size = 256;           // running requests at most
  std::int64_t max_num_batched_tokens = 8192;  // prompt tokens admitted in one iteration at most
};

// Orca's iteration-level batching (OSDI 2022), as the vLLM paper's baseline: requests join
// and leave the batch at every iteration. Each iteration admits waiting requests first-come
// first-served while the batch has seats, the prompt-token limit allows and the allocator
// grants their KV memory, and runs their prefills together with one decode step of every
// other running request (selective batching mixes the two in one batch).
//
// Paired with contiguous allocation (its design point) a request's region is reserved at
// admission, so decodes always grow into it and nobody is ever preempted. With paged
// allocation a decode that finds no free slot preempts the newest running request by
// recompute, as vLLM does. Decode slots are therefore taken before admissions: otherwise a
// newcomer could take the slot an older running request needs and push it out. An
// iteration that had to preempt admits nobody, since memory is short.
//
// Works with any allocator.
class OrcaScheduler final : public QueueingScheduler {
 public:
  explicit OrcaScheduler(const OrcaSchedulerOptions& options);

  std::optional<std::string> reject_reason(const RequestSpec& request,
                                           const IKvCacheAllocator& allocator) const override;
  void plan(IKvCacheAllocator& allocator, BatchPlan& plan) override;
  BatchBudget budget() const override {
    return {options_.max_num_batched_tokens, BatchBudget::kUnlimited, options_.max_batch_size};
  }
  // Admissions wait on seats and memory, neither of which frees while nobody leaves.
  bool decode_plans_repeat() const override { return true; }

 private:
  void admit_prefills(IKvCacheAllocator& allocator, BatchPlan& plan);

  OrcaSchedulerOptions options_;
  DecodeScratch scratch_;
};

}  // namespace servesim
