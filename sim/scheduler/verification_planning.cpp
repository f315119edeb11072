#include "sim/scheduler/verification_planning.h"

#include <algorithm>

namespace servesim {

GrowthOutcome plan_speculative_decode(Request* request, std::int64_t k, std::int64_t& budget,
                                      RequestQueues& queues, IKvCacheAllocator& allocator,
                                      BatchPlan& plan) {
  const std::int64_t drafts = drafts_for(*request, k, budget);
  const std::int64_t tokens = 1 + drafts;
  const std::int64_t grow = std::max<std::int64_t>(0, tokens - request->lookahead_slots);
  const GrowthOutcome outcome = grow_or_preempt(request, grow, queues, allocator, plan);
  if (outcome != GrowthOutcome::Grown) return outcome;
  if (drafts == 0) {
    plan.add_decode(request);
  } else {
    plan.add_speculative_step(request, tokens);
    add_verification(plan.shape, tokens, request->computed_tokens);
  }
  budget -= tokens;
  return outcome;
}

}  // namespace servesim
