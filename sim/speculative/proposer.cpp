#include "sim/speculative/proposer.h"

#include <algorithm>

namespace servesim {

double Proposer::propose_s(const BatchPlan& plan) const {
  if (network_ == nullptr) return 0;
  BatchShape first;
  BatchShape later;  // the second draft pass; each further one a token longer per sequence
  std::int64_t passes = 0;
  for (const ScheduledWork& w : plan.work) {
    const Request& r = *w.request;
    if (w.prefill) {
      first.add_prefill(w.tokens, r.computed_tokens, r.computed_tokens + w.tokens == r.tokens());
      continue;
    }
    first.add_decode(r.computed_tokens + 1);
    const std::int64_t drafts = w.tokens - 1;
    if (drafts > 1) later.add_decode(r.computed_tokens + 2);
    passes = std::max(passes, drafts);
  }
  if (first.empty()) return 0;
  double total_s = network_->estimate(first).total_time_s;
  for (std::int64_t pass = 2; pass <= passes; ++pass) {
    total_s += network_->estimate(later).total_time_s;
    later.decode_context_tokens += later.decode_sequences;
  }
  return total_s;
}

}  // namespace servesim
