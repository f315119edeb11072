#pragma once

#include <cstdint>

#include "sim/scheduler/batch_scheduler.h"
#include "sim/scheduler/running_requests.h"

namespace servesim {

struct VllmSchedulerOptions {
  std::int64_t max_num_seqs = 256;             // running requests at most
  std::int64_t max_num_batched_tokens = 8192;  // tokens computed in one iteration at most
};

// vLLM's iteration-level scheduler (v0, without chunked prefill): waiting prompts are
// admitted first-come first-served while sequences, the token budget and KV memory allow,
// and an iteration that admits any prompt runs prefills only. Otherwise every running
// request decodes one token; when a decode finds no free slot, the most recently arrived
// running request is preempted by recompute (its KV memory dropped, the request put back at
// the head of the queue to re-prefill its prompt and generated tokens later), or by swap
// when the replica has swap space: its KV blocks are copied to host memory and copied back,
// before any new prompt is admitted, once memory allows.
class VllmScheduler final : public QueueingScheduler {
 public:
  // `swap_capacity_tokens`: host memory for preemption by swap (0: by recompute only).
  explicit VllmScheduler(const VllmSchedulerOptions& options,
                         std::int64_t swap_capacity_tokens = 0);

  std::optional<std::string> reject_reason(const RequestSpec& request,
                                           const IKvCacheAllocator& allocator) const override;
  void plan(IKvCacheAllocator& allocator, BatchPlan& plan) override;
  BatchBudget budget() const override {
    return {options_.max_num_batched_tokens, BatchBudget::kUnlimited, options_.max_num_seqs};
  }
  // Prompts are admitted, and swapped requests resumed, only when the allocator can admit
  // them, which a cache that only fills never starts allowing.
  bool decode_plans_repeat() const override { return true; }

 private:
  void admit_prefills(IKvCacheAllocator& allocator, BatchPlan& plan);

  VllmSchedulerOptions options_;
  DecodeScratch scratch_;
};

}  // namespace servesim
