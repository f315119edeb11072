#pragma once

#include <cstdint>

#include "sim/scheduler/batch_scheduler.h"
#include "sim/scheduler/impl/retracted_to_back_order.h"
#include "sim/scheduler/running_requests.h"

namespace servesim {

struct SglangSchedulerOptions {
  // Requests in the decode batch at most; 0: derived from the KV pool as SGLang derives it
  // (max_total_num_tokens / 2, capped by its request pool: 2,048 to 4,096 slots).
  std::int64_t max_running_requests = 0;
  std::int64_t max_prefill_tokens = 16384;   // tokens one prefill batch computes at most
  std::int64_t chunked_prefill_size = 8192;  // tokens one prompt computes per batch; 0: off
  std::int64_t context_len_tokens = 0;       // max_len, for the request pool's size
};

// SGLang's scheduler (python/sglang/srt/managers/scheduler.py get_next_batch_to_run and
// schedule_policy.py PrefillAdder, 0.4-0.5, overlap scheduling on, mixed chunks off).
//
// Prefill and decode batches are kept apart, and a prefill batch comes first whenever one
// can be formed: the prompt being chunked continues first, then waiting requests join in
// queue order while the batch computes at most max_prefill_tokens (a first prompt may pass
// it), a prompt longer than what is left of chunked_prefill_size is cut there (one prompt
// is chunked at a time), the decode batch plus the newcomers stay under
// max_running_requests, and memory is left for the tokens everyone will still generate:
// each running request holds min(its output tokens left, 4,096) x new_token_ratio, each
// newcomer its prompt plus min(its output tokens, 4,096), against the free and evictable KV
// tokens. A request that does not fit stops the walk (nobody overtakes) and marks the batch
// full: no prefill is tried again until the decode batch shrinks.
//
// Otherwise the decode batch decodes one token each. When the KV cache cannot hold that
// token for everyone, requests are retracted (preempted by recompute) until what is free
// would last 20 decode steps: those with the fewest generated tokens first, the longest
// prompt first among equals, never the last one; they go to the back of the waiting queue,
// and new_token_ratio becomes (tokens generated + 20 per request) / output tokens over the
// requests left, at most 1. Every decode step without retraction lowers the ratio by
// (0.7 - 0.098) / 600 down to 0.098; an idle replica resets it to 0.7
// (schedule_conservativeness 1).
//
// Declared for the paged allocator (SGLang's token pool is paged, page_size 1 by default).
class SglangScheduler final : public IBatchScheduler {
 public:
  explicit SglangScheduler(const SglangSchedulerOptions& options);

  std::optional<std::string> reject_reason(const RequestSpec& request,
                                           const IKvCacheAllocator& allocator) const override;
  void enqueue(Request* request) override;
  void plan(IKvCacheAllocator& allocator, BatchPlan& plan) override;
  void retire(std::span<Request* const> finished) override;
  const RequestQueues& queues() const override { return queues_; }
  BatchBudget budget() const override;
  // A decode-only plan with requests waiting marked the batch full (or nobody waits), and
  // the flag holds while nobody leaves; a plan that shrank the batch is the exception
  // (last_plan_repeats). The ratio's decay over the plans a decode run stands for arrives
  // through on_decode_plans_skipped.
  bool decode_plans_repeat() const override { return true; }
  bool last_plan_repeats() const override { return last_plan_repeats_; }
  void on_decode_plans_skipped(std::int64_t plans) override;

  double new_token_ratio() const { return new_token_ratio_; }

 private:
  // SGLang's constants (global_config.py; SGLANG_CLIP_MAX_NEW_TOKENS_ESTIMATION).
  static constexpr double kInitNewTokenRatio = 0.7;
  static constexpr double kMinNewTokenRatio = kInitNewTokenRatio * 0.14;
  static constexpr double kNewTokenRatioDecay = (kInitNewTokenRatio - kMinNewTokenRatio) / 600;
  static constexpr std::int64_t kClipMaxNewTokens = 4096;
  static constexpr std::int64_t kRetractDecodeSteps = 20;

  // Forms a prefill batch into `plan`; false when none can be formed.
  bool plan_prefill(IKvCacheAllocator& allocator, BatchPlan& plan);
  void plan_decode(IKvCacheAllocator& allocator, BatchPlan& plan);
  // Retracts from the gathered decode batch (scratch_, in queue order) until what is free
  // lasts kRetractDecodeSteps decode steps, and sets the new ratio.
  void retract(IKvCacheAllocator& allocator, BatchPlan& plan);
  std::int64_t max_running(const IKvCacheAllocator& allocator) const;
  void decay_ratio(std::int64_t steps);

  SglangSchedulerOptions options_;
  RetractedToBack order_;
  RequestQueues queues_;
  double new_token_ratio_ = kInitNewTokenRatio;
  bool batch_is_full_ = false;
  bool last_plan_repeats_ = true;
  bool batch_shrank_ = false;  // requests left since the last decode plan
  std::int64_t last_arrival_ = -1;
  DecodeScratch scratch_;  // the decode batch a plan gathers
};

}  // namespace servesim
