#include "sim/cluster/decode_runs.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "sim/core/error.h"

namespace servesim {

std::int64_t decode_run_limit(double between_cuts, double launch_rounds) {
  // Runs long uncut (the decayed cuts tend to 0): the limit, sqrt(2 m C) for large m, is
  // past the longest from m = 10^18 on (and m may reach infinity).
  if (!(between_cuts < 1e18)) return kLongestDecodeRun;
  const double c = launch_rounds / between_cuts;
  const double limit = between_cuts * std::log1p(c + std::sqrt(2 * c));
  return std::clamp<std::int64_t>(std::llround(limit), 4, kLongestDecodeRun);
}

std::int64_t DecodeRuns::steps_for(const BatchPlan& plan, std::size_t running_requests,
                                   const IBatchScheduler* judge) {
  if ((!after_preemption_ && !plan.preempted.empty()) || plan.swap_in_tokens > 0 ||
      plan.swap_out_tokens > 0 || plan.host_load_tokens > 0 ||
      plan.work.size() != running_requests) {
    return 1;
  }
  // The run stops at the first iteration that finishes a request (that one included: the
  // batch changes only after it) and before any the allocator could not grow, unless the
  // scheduler judges preempting plans: then it goes on through rounds that preempt while
  // the scheduler says the plans after them repeat, and ends with one that does not.
  std::int64_t fewest_tokens_left = plan.fewest_tokens_left;
  if (has_prompts(plan) && !fold_prompts(plan, fewest_tokens_left)) return 1;
  const auto launch_rounds = static_cast<double>(
      kRoundsPerSequence * static_cast<std::int64_t>(plan.work.size()) + kRoundsPerLaunch);
  const std::int64_t limit = decode_run_limit(recent_iterations_ / recent_cuts_, launch_rounds);
  const std::int64_t steps = std::min(limit, fewest_tokens_left);
  if (steps < 2) return 1;
  const std::span<const std::int64_t> sequences = sequences_of(plan);
  stretches_.clear();
  if (judge == nullptr || !after_preemption_) {
    stretches_.push_back(
        {allocator_.decode_rounds_available(sequences, steps - 1), sequences.size(), 0});
  } else {
    // The new stretch's first round comes after the first iteration and the rounds of the
    // stretches before it (summed as they come); its victims are the plan's decodes it no
    // longer keeps.
    std::int64_t round = 1;
    std::size_t summed = 0;
    allocator_.decode_stretches(
        sequences, steps - 1,
        [&](const DecodeRoundStretch& next) {
          for (; summed < stretches_.size(); ++summed)
            round += stretches_[summed].rounds;
          victims_.clear();
          for (std::size_t i = stretches_.back().sequences; i-- > next.sequences;)
            victims_.push_back(plan.work[i].request);
          return judge->repeats_after_preempting(
              victims_, round, static_cast<std::int64_t>(next.sequences), next.admissible_tokens);
        },
        stretches_);
  }
  std::int64_t rounds = 0;
  for (const DecodeRoundStretch& stretch : stretches_)
    rounds += stretch.rounds;
  return 1 + rounds;
}

bool DecodeRuns::fold_prompts(const BatchPlan& plan, std::int64_t& fewest_tokens_left) {
  // The prompts come after every decode, and each chunk ends its prompt: the request samples
  // a token, and decodes in the rounds after, last in the batch as the scheduler's next plans
  // (IBatchScheduler::last_plan_then_decodes) order it.
  const std::size_t decodes = plan.decode_sequences.size();
  if (static_cast<std::int64_t>(plan.work.size() - decodes) != plan.shape.prefill_sequences) {
    return false;
  }
  sequences_.assign(plan.decode_sequences.begin(), plan.decode_sequences.end());
  contexts_ = plan.shape.decode_context_tokens;
  for (std::size_t i = decodes; i < plan.work.size(); ++i) {
    const ScheduledWork& w = plan.work[i];
    const Request& r = *w.request;
    if (!w.prefill || r.computed_tokens + w.tokens != r.tokens()) return false;
    sequences_.push_back(r.spec.id);
    contexts_ += r.computed_tokens + w.tokens;
    fewest_tokens_left = std::min(fewest_tokens_left, r.output_tokens_left());
  }
  return true;
}

std::span<const std::int64_t> DecodeRuns::sequences_of(const BatchPlan& plan) const {
  return has_prompts(plan) ? std::span<const std::int64_t>(sequences_) : plan.decode_sequences;
}

double DecodeRuns::price(const BatchPlan& plan) {
  std::int64_t steps = 1;
  for (const DecodeRoundStretch& stretch : stretches_)
    steps += stretch.rounds;
  durations_s_.resize(static_cast<std::size_t>(steps));
  // Each stretch is priced as its own batch: the first iteration's and the rounds after it,
  // then each later stretch's from its first round, its contexts then those of the decodes
  // it keeps, each grown by one token per iteration since the first. A run whose first
  // iteration ends prompts decodes them in its later ones: its batch there is priced, and
  // reported, from iteration 0 as if they had decoded then too, with their contexts
  // before the token they sample (the first iteration is priced as planned).
  const bool folded = has_prompts(plan);
  BatchShape first = plan.shape;
  if (folded) {
    first = BatchShape{};
    first.spans = plan.shape.spans;
    first.add_decodes(static_cast<std::int64_t>(sequences_.size()), contexts_);
  }
  batches_.clear();
  batches_.push_back({0, first.decode_sequences, first.decode_context_tokens,
                      static_cast<std::int32_t>(plan.preempted.size())});
  time_model_.estimate_decode_run(
      first, std::span(durations_s_).first(static_cast<std::size_t>(1 + stretches_[0].rounds)));
  if (folded) durations_s_.front() = time_model_.estimate(plan.shape).total_time_s;
  std::int64_t kept_contexts = first.decode_context_tokens;  // at iteration 0
  std::size_t iteration = static_cast<std::size_t>(1 + stretches_[0].rounds);
  for (std::size_t s = 1; s < stretches_.size(); ++s) {
    const DecodeRoundStretch& stretch = stretches_[s];
    for (std::size_t i = stretch.sequences; i < stretches_[s - 1].sequences; ++i)
      kept_contexts -= plan.work[i].request->computed_tokens + plan.work[i].tokens;
    const auto decodes = static_cast<std::int64_t>(stretch.sequences);
    BatchShape shape = first;
    shape.decode_sequences = decodes;
    shape.sampled_sequences = decodes;
    shape.decode_context_tokens = kept_contexts + static_cast<std::int64_t>(iteration) * decodes;
    batches_.push_back(
        {iteration, decodes, shape.decode_context_tokens,
         static_cast<std::int32_t>(stretches_[s - 1].sequences - stretch.sequences)});
    time_model_.estimate_decode_run(
        shape,
        std::span(durations_s_).subspan(iteration, static_cast<std::size_t>(stretch.rounds)));
    iteration += static_cast<std::size_t>(stretch.rounds);
  }
  return durations_s_.front();
}

SimTime DecodeRuns::start(std::int64_t batch, const IterationRecord& first, SimTime first_end,
                          std::int64_t next_final_tokens) {
  batch_ = batch;
  settled_ = false;
  // The later iterations only decode: the first one's prompt work is not theirs.
  first_ = first;
  first_.clear_prompt_work();
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
  // The stretches up to the iterations kept.
  auto left = static_cast<std::int64_t>(steps) - 1;
  std::size_t kept = 0;
  while (kept < stretches_.size() && (kept == 0 || left > 0)) {
    stretches_[kept].rounds = std::min(stretches_[kept].rounds, left);
    left -= stretches_[kept].rounds;
    ++kept;
  }
  stretches_.resize(kept);
  batches_.resize(kept);
  return ends_.back();
}

void DecodeRuns::settle(const BatchPlan& plan) {
  if (settled_) return;
  usages_.resize(ends_.size() - 1);
  allocator_.grow_decode_stretches(sequences_of(plan), stretches_, next_final_tokens_, usages_);
  settled_ = true;
}

std::int64_t DecodeRuns::finish(SimTime now) {
  batch_ = -1;
  if (ends_.back() != now) {
    throw InvariantError("time_monotonic", "a decode run completed off time", now);
  }
  const auto steps = static_cast<std::int64_t>(ends_.size());
  // A cut run ends before the iterations it was priced for.
  const bool was_cut = ends_.size() < durations_s_.size();
  recent_iterations_ = recent_iterations_ * kRunMemory + static_cast<double>(steps);
  recent_cuts_ = recent_cuts_ * kRunMemory + (was_cut ? 1.0 : 0.0);
  return steps;
}

}  // namespace servesim
