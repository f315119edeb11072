#include "sim/cluster/decode_runs.h"

#include <algorithm>
#include <string>

#include "sim/core/error.h"

namespace servesim {

std::int64_t DecodeRuns::steps_for(const BatchPlan& plan, std::size_t running_requests) const {
  if (plan.shape.prefill_sequences > 0 || (!after_preemption_ && !plan.preempted.empty()) ||
      plan.swap_in_tokens > 0 || plan.swap_out_tokens > 0 || plan.work.size() != running_requests) {
    return 1;
  }
  // The run stops at the first iteration that finishes a request (that one included: the
  // batch changes only after it) and before any the allocator could not grow.
  const std::int64_t steps = std::min(run_limit_, plan.fewest_tokens_left);
  if (steps < 2) return 1;
  return 1 + allocator_.decode_rounds_available(plan.decode_sequences, steps - 1);
}

double DecodeRuns::price(const BatchPlan& plan, std::int64_t steps) {
  durations_s_.resize(static_cast<std::size_t>(steps));
  time_model_.estimate_decode_run(plan.shape, durations_s_);
  return durations_s_.front();
}

SimTime DecodeRuns::start(std::int64_t batch, const IterationRecord& first, SimTime first_end,
                          std::int64_t next_final_tokens) {
  batch_ = batch;
  settled_ = false;
  first_ = first;
  next_final_tokens_ = next_final_tokens;
  // Every context grows by one token per iteration; each iteration is priced and rounded on
  // its own, exactly as it would be launched alone.
  const std::size_t steps = durations_s_.size();
  ends_.resize(steps);
  SimTime end = first_end;
  ends_[0] = end;
  for (std::size_t k = 1; k < steps; ++k) {
    end += SimTime::duration_from_seconds(durations_s_[k]);
    ends_[k] = end;
  }
  return end;
}

std::optional<SimTime> DecodeRuns::cut(SimTime now, RunCut cut) {
  if (batch_ < 0 || settled_) return std::nullopt;
  // Iteration k (0-based) starts where iteration k - 1 ends. It launched before a cause
  // at `now` when it started before `now`, or at `now` for a cause after the launches.
  const auto in_flight = cut.after_launches ? std::upper_bound(ends_.begin(), ends_.end(), now)
                                            : std::lower_bound(ends_.begin(), ends_.end(), now);
  if (in_flight == ends_.end()) {
    throw InvariantError("time_monotonic", "a decode run ended unnoticed", now);
  }
  auto steps = static_cast<std::size_t>(in_flight - ends_.begin()) + 1;
  if (cut.planned_ahead && *in_flight != now) ++steps;
  if (steps >= ends_.size()) return std::nullopt;
  ends_.resize(steps);
  // Halved, but not below kRoundsPerSequence per sequence of the batch: the rounds priced
  // in vain then cost about what ending the run early saves.
  run_limit_ = std::max<std::int64_t>(
      {4, run_limit_ / 2, kRoundsPerSequence * std::int64_t{first_.batch_size}});
  return ends_.back();
}

void DecodeRuns::settle(const BatchPlan& plan) {
  if (settled_) return;
  usages_.resize(ends_.size() - 1);
  allocator_.grow_decode_rounds(plan.decode_sequences, next_final_tokens_, usages_);
  settled_ = true;
}

std::int64_t DecodeRuns::finish(SimTime now) {
  batch_ = -1;
  if (ends_.back() != now) {
    throw InvariantError("time_monotonic", "a decode run completed off time", now);
  }
  const auto steps = static_cast<std::int64_t>(ends_.size());
  if (steps == run_limit_) run_limit_ = std::min<std::int64_t>(run_limit_ * 2, 1 << 16);
  return steps;
}

}  // namespace servesim
