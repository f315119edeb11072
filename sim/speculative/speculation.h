#pragma once

#include <cstdint>

#include "sim/core/rng.h"
#include "sim/core/sim_time.h"
#include "sim/metrics/run_summary.h"
#include "sim/scheduler/batch_plan.h"
#include "sim/speculative/acceptance_model.h"
#include "sim/speculative/proposer.h"
#include "sim/speculative/speculative_config.h"

namespace servesim {

// The speculative decoding of one run, which its replicas share: the drafts each decoding
// request proposes (k, fewer near its end: scheduler/verification_planning.h), what proposing costs
// (Proposer), how many drafts the target accepts (AcceptanceModel, drawn from the run's
// "speculative_acceptance" stream in completion order, which the event order fixes), and the
// figures of summary.json's spec_decode section.
class Speculation {
 public:
  Speculation(const SpeculativeConfig& config, Proposer proposer, const RngStreams& streams);

  std::int64_t num_speculative_tokens() const { return k_; }
  // The seconds proposing adds to a planned step whose target pass (verification and the
  // rest of the batch) takes `target_s`; both are counted for the time shares.
  double price_step(const BatchPlan& plan, double target_s);
  // Completes a decoding request's step of `query_tokens` (its last token and
  // query_tokens - 1 drafts) ended at `at`: draws the accepted drafts and applies them
  // (complete_speculative_step). The step always samples.
  void complete(Request& request, std::int64_t query_tokens, SimTime at);
  SpecDecodeSummary summary() const;
  const AcceptanceModel& acceptance() const { return acceptance_; }

 private:
  std::int64_t k_;
  Proposer proposer_;
  AcceptanceModel acceptance_;
  std::int64_t verification_steps_ = 0;  // request-steps with at least one draft
  std::int64_t proposed_tokens_ = 0;
  std::int64_t accepted_tokens_ = 0;
  std::int64_t emitted_tokens_ = 0;  // by those steps, bonus tokens included
  double step_s_ = 0;                // every step's time, proposing included
  double propose_s_ = 0;
  double verify_s_ = 0;  // target passes of steps with a verification
};

}  // namespace servesim
