#pragma once

#include <cstdint>

#include "sim/hardware/batch_shape.h"
#include "sim/memory/kv_cache_allocator.h"
#include "sim/scheduler/batch_plan.h"
#include "sim/scheduler/request_queues.h"
#include "sim/scheduler/running_requests.h"

namespace servesim {

// A verification step of one request, in the sums the cost model prices: its `query_tokens`
// (the token it sampled last plus its drafts) are a short chunk after `cached_tokens`, whose
// attention reads the context plus the new tokens under the causal mask, and every one of
// them has its logits computed (the target samples at each draft position).
inline void add_verification(BatchShape& shape, std::int64_t query_tokens,
                             std::int64_t cached_tokens) noexcept {
  shape.add_prefill(query_tokens, cached_tokens, true);
  shape.sampled_sequences += query_tokens - 1;
}

// The drafts a decoding request proposes for its next step: k, fewer near its output end
// (a step emits at most its drafts plus one, and never past the output, so never past
// max_model_len either: admission cut the output there) or when only `budget` tokens of the
// step's budget are left (vLLM cuts the spec tokens to the budget too).
inline std::int64_t drafts_for(const Request& request, std::int64_t k,
                               std::int64_t budget) noexcept {
  std::int64_t drafts = k;
  if (request.output_tokens_left() - 1 < drafts) drafts = request.output_tokens_left() - 1;
  if (budget - 1 < drafts) drafts = budget - 1;
  return drafts < 0 ? 0 : drafts;
}

// Plans a decoding request's step when the engine speculates: 1 + drafts_for(...) tokens
// against `budget` (which it lowers), its KV slots grown to hold all of them beside the
// slots it still holds from its last step's rejected drafts (Request::lookahead_slots),
// preempting as grow_or_preempt does; a step with drafts is a verification
// (add_verification), one without a plain decode. Returns how the growth went; only Grown
// adds the request to the plan.
GrowthOutcome plan_speculative_decode(Request* request, std::int64_t k, std::int64_t& budget,
                                      RequestQueues& queues, IKvCacheAllocator& allocator,
                                      BatchPlan& plan);

}  // namespace servesim
