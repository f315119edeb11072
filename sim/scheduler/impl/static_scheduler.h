#pragma once

#include <cstdint>

#include "sim/scheduler/batch_scheduler.h"

namespace servesim {

struct StaticSchedulerOptions {
  std::int64_t batch_size = 8;  // requests in one batch at most
};

// Request-level batching, as in FasterTransformer: when no batch is running, up to
// `batch_size` waiting requests form one (first-come first-served), prefill their prompts
// together in one iteration, then decode together, one token each per iteration, until the
// last of them finishes. A member that finishes early stops computing but its seat stays
// empty: nobody joins a running batch, which is the waste iteration-level batching removes.
//
// A batch never preempts: it starts only if every member can reach its final length. The
// check goes through the allocator's interface alone, so it is exact for any allocator: on
// trial, each candidate is admitted holding its prompt, as it will be, and grown to its
// final length (paged allocation then counts each member's rounded-up last block;
// contiguous allocation places the region its reservation policy sizes for that split).
// The trial admissions are released, and the members admitted for real holding their
// prompts, in the same order, into the same empty cache. A token sum against capacity
// would miss the block rounding. Because the replica releases each member as it finishes,
// its memory shows as free, not held, until the batch ends.
//
// Works with any allocator.
class StaticScheduler final : public QueueingScheduler {
 public:
  explicit StaticScheduler(const StaticSchedulerOptions& options);

  std::optional<std::string> reject_reason(const RequestSpec& request,
                                           const IKvCacheAllocator& allocator) const override;
  void plan(IKvCacheAllocator& allocator, BatchPlan& plan) override;
  BatchBudget budget() const override {
    return {BatchBudget::kUnlimited, BatchBudget::kUnlimited, options_.batch_size};
  }
  // A running batch decodes its unfinished members every iteration and admits nobody.
  bool decode_plans_repeat() const override { return true; }

 private:
  void form_batch(IKvCacheAllocator& allocator, BatchPlan& plan);
  void schedule_decodes(IKvCacheAllocator& allocator, BatchPlan& plan);

  StaticSchedulerOptions options_;
};

}  // namespace servesim
