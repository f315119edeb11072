#include "sim/speculative/speculation.h"

#include "sim/scheduler/request_lifecycle.h"

namespace servesim {

Speculation::Speculation(const SpeculativeConfig& config, Proposer proposer,
                         const RngStreams& streams)
    : k_(config.num_speculative_tokens),
      proposer_(std::move(proposer)),
      acceptance_(config.acceptance_rate, streams.stream("speculative_acceptance")) {}

double Speculation::price_step(const BatchPlan& plan, double target_s) {
  const double propose_s = proposer_.propose_s(plan);
  bool verifies = false;
  for (const ScheduledWork& w : plan.work) {
    if (!w.prefill && w.tokens > 1) {
      verifies = true;
      break;
    }
  }
  step_s_ += target_s + propose_s;
  propose_s_ += propose_s;
  if (verifies) verify_s_ += target_s;
  return propose_s;
}

void Speculation::complete(Request& request, std::int64_t query_tokens, SimTime at) {
  const std::int64_t proposed = query_tokens - 1;
  const std::int64_t accepted = acceptance_.draw(proposed);
  complete_speculative_step(request, proposed, accepted, at);
  if (proposed == 0) return;
  verification_steps_ += 1;
  proposed_tokens_ += proposed;
  accepted_tokens_ += accepted;
  emitted_tokens_ += accepted + 1;
}

SpecDecodeSummary Speculation::summary() const {
  SpecDecodeSummary s;
  s.verification_steps = verification_steps_;
  s.proposed_tokens = proposed_tokens_;
  s.accepted_tokens = accepted_tokens_;
  if (proposed_tokens_ > 0) {
    s.acceptance_rate =
        static_cast<double>(accepted_tokens_) / static_cast<double>(proposed_tokens_);
  }
  if (verification_steps_ > 0) {
    s.mean_tokens_per_step =
        static_cast<double>(emitted_tokens_) / static_cast<double>(verification_steps_);
  }
  if (step_s_ > 0) {
    s.proposing_share = propose_s_ / step_s_;
    s.verifying_share = verify_s_ / step_s_;
  }
  return s;
}

}  // namespace servesim
