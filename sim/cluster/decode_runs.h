#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "sim/cluster/serving_observer.h"
#include "sim/core/sim_time.h"
#include "sim/hardware/execution_time_model.h"
#include "sim/memory/decode_round_allocator.h"
#include "sim/metrics/records.h"
#include "sim/scheduler/batch_plan.h"
#include "sim/scheduler/batch_scheduler.h"

namespace servesim {

// Bulk decoding, a replica's fast path (a named mode beside the plain one, which launches
// every iteration on its own; engine.bulk_decode picks it, and tests hold the two equal).
//
// When a plan decodes every running request and does nothing else (or preempts others to make
// room, where the scheduler judges such plans: IBatchScheduler::judges_preempting_plans; or
// ends the prompts of its last requests, where the scheduler says decode plans follow:
// IBatchScheduler::last_plan_then_decodes), and the scheduler promises that such plans repeat
// (IBatchScheduler::decode_plans_repeat), the iterations that follow are known until a request
// finishes or the allocator would refuse a token.
// The replica then launches them as one decode run: each iteration priced on its own (O(1) apiece,
// IExecutionTimeModel::estimate_decode_run), one completion event at the end of the last, and the
// allocator advanced in bulk (IDecodeRoundAllocator). A request arriving for the replica cuts the
// run where one-at-a-time iterations would have let it in: after the iteration in flight at that
// instant, or the one after it when that one's plan was made before (planning ahead); not at all
// when it queues behind a waiting request the run's plans do not admit. A change to the allocator
// from outside (a KV transfer's end) cuts the run too, and the iterations launched by then grow
// the allocator before the change (settle). Every metric equals the one-at-a-time result: each
// iteration is reported with its own start, duration and KV usage.
//
// Where the scheduler judges preempting plans and the allocator can plan them
// (IDecodeRoundAllocator::decode_stretches), a run goes on through rounds in which the
// allocator finds no block: the newest requests of the batch are preempted, as the round's
// plan would preempt them, and the rest go on while the scheduler judges the plans after
// the round to repeat (IBatchScheduler::repeats_after_preempting); else the run ends with
// that round. Each
// stretch of the run between such rounds is priced as its own batch, and the preemptions
// are applied when the run completes (stretches(), batches()): O(preempted requests) per
// such round rather than a launch over the whole batch.
//
// Where a cut (DecodeRuns::cut) ends a run: after the iteration in flight at the cut's
// instant, which is the one ending then, unless the cause comes after that instant's
// launches (the events' phases: sim/cluster/cluster.h).
struct RunCut {
  // The cause comes after the launches at its instant (a KV transfer's end): an iteration
  // starting then was launched before it.
  bool after_launches = false;
  // The cause is a request reaching an engine that plans each step while the one before
  // runs: the plan of the iteration after the one in flight was made without it, so that
  // iteration runs too (unless it had not started: then nothing was planned yet).
  bool planned_ahead = false;
};

// The most rounds a decode run is priced for.
inline constexpr std::int64_t kLongestDecodeRun = 1 << 16;

// The rounds a run is priced for at most (runs are priced up front), when runs last
// `between_cuts` iterations between cuts on average (a cut, as an arrival makes it, taken as
// an event of a constant rate per iteration) and a launch costs as much as pricing
// `launch_rounds` rounds: a run cut short has its later rounds priced in vain, one that ends
// at its limit costs a launch. With m = between_cuts and c = launch_rounds / m, the length
// L = m ln(1 + c + sqrt(2c)) spends within a few percent of the fewest rounds and launches
// per iteration run (from c = 0.01 to 1,000); from 4 to kLongestDecodeRun.
std::int64_t decode_run_limit(double between_cuts, double launch_rounds);

// One run at a time: the mode is off with pipeline parallelism (several batches in flight).
class DecodeRuns {
 public:
  // `after_preemption`: a plan that preempted may start a run too, when the scheduler says it
  // repeats (IBatchScheduler::judges_preempting_plans).
  DecodeRuns(IDecodeRoundAllocator& allocator, const IExecutionTimeModel& time_model,
             bool after_preemption)
      : allocator_(allocator), time_model_(time_model), after_preemption_(after_preemption) {}

  // How many iterations a run of `plan` would last, its own included (1: it cannot start
  // one), and its stretches. `running_requests` is the scheduler's running queue's length;
  // `judge`, when not null, is the scheduler, which may judge rounds that preempt (else
  // the run stops before the first). The scheduler has said that the plans after `plan`
  // repeat: IBatchScheduler::last_plan_repeats, or for a plan with prompt chunks
  // last_plan_then_decodes (such a run starts only when the chunks end their prompts, after
  // every decode).
  std::int64_t steps_for(const BatchPlan& plan, std::size_t running_requests,
                         const IBatchScheduler* judge);
  // Prices the run steps_for planned last (at least 2 iterations) of `plan`; the first
  // one's duration.
  double price(const BatchPlan& plan);
  // The run priced last starts as batch `batch`, its first iteration (reported as `first`)
  // ending at `first_end`; `next_final_tokens` is the waiting queue's head as every
  // iteration of the run sees it. Returns when the run ends.
  SimTime start(std::int64_t batch, const IterationRecord& first, SimTime first_end,
                std::int64_t next_final_tokens);

  bool is_run(std::int64_t batch) const { return batch_ == batch; }
  bool in_flight() const { return batch_ >= 0; }
  // Something at `now` may change the plans after it (see RunCut): the run in flight ends
  // after the iterations launched by then, and with `cut.planned_ahead` one more. Returns the
  // run's new end, or nullopt when no run is in flight, it ends then anyway, or it was
  // settled (which kept the iterations launched by the instant of the settling cut).
  std::optional<SimTime> cut(SimTime now, RunCut cut);
  // The allocator is about to change at the instant of the last cut (made with
  // `after_launches`): the later iterations kept grow it now, as their launches did before
  // the change, rather than when the run completes. `plan` is the run's.
  void settle(const BatchPlan& plan);

  // The run completes at `now` (checked): returns its iterations, the first included. The
  // replica then completes the first iteration's steps, with the later ones in bulk, and
  // calls report_later_iterations.
  std::int64_t finish(SimTime now);
  SimTime first_end() const { return ends_.front(); }
  // When the run's last iteration started: where the one before it ended, or `launched`
  // (the run's launch) when the run was cut to one iteration.
  SimTime last_start(SimTime launched) const {
    return ends_.size() > 1 ? ends_[ends_.size() - 2] : launched;
  }
  // The iterations after the run's first, as each would have been launched: the allocator
  // grows every sequence of `plan` by one token per iteration, then
  // `check_usage(usage, end of the iteration before)` checks each, and the observer hears
  // of them all at once.
  template <class CheckUsage>
  void report_later_iterations(const BatchPlan& plan, IServingObserver& observer,
                               CheckUsage check_usage);
  // The run's stretches (IDecodeRoundAllocator::decode_stretches) and the batch each leaves,
  // as far as the run goes: stretch s >= 1 preempted plan.work[stretches()[s].sequences,
  // stretches()[s - 1].sequences) in iteration batches()[s].first_iteration.
  std::span<const DecodeRoundStretch> stretches() const { return stretches_; }
  std::span<const RunBatch> batches() const { return batches_; }
  // The iterations of the run that finished last (finish), or of the one in flight.
  std::int64_t steps() const { return static_cast<std::int64_t>(ends_.size()); }
  // The end of iteration k (0: the first).
  SimTime end_of(std::size_t k) const { return ends_[k]; }

 private:
  IDecodeRoundAllocator& allocator_;
  const IExecutionTimeModel& time_model_;
  bool after_preemption_;
  std::int64_t batch_ = -1;  // the run in flight; -1: none
  std::vector<SimTime> ends_;
  std::vector<double> durations_s_;            // the iterations' durations, as priced at launch
  std::vector<KvUsage> usages_;                // the KV memory of iterations 2, 3, ...
  std::vector<DecodeRoundStretch> stretches_;  // the run's rounds after its first iteration
  std::vector<RunBatch> batches_;              // the batch of each stretch, from iteration 0
  std::vector<Request*> victims_;              // steps_for's working space
  bool settled_ = false;                       // the later iterations grew the allocator (settle)
  IterationRecord first_;                      // the first iteration's, less prompt work
  // Where the run's first iteration ends prompts (fold_prompts), its later ones decode
  // sequences_, whose contexts summed contexts_ at iteration 0 (less the tokens the prompts
  // sample).
  std::vector<std::int64_t> sequences_;
  std::int64_t contexts_ = 0;
  // The waiting queue's head as every iteration of the run saw it at launch (a request
  // arriving later cuts the run, but may be queued before the run completes).
  std::int64_t next_final_tokens_ = 0;
  // The runs' limit (decode_run_limit): a launch costs about as much as pricing
  // kRoundsPerSequence rounds per sequence of the batch plus kRoundsPerLaunch (planning,
  // emitting tokens, handing out blocks; measured on bench/'s scenarios 1, 2 and 5), and the
  // iterations between cuts are those of the recent runs over their cuts, each run's counts
  // decayed by kRunMemory per run after it (a run not cut counts its iterations without one).
  static constexpr std::int64_t kRoundsPerSequence = 2;
  static constexpr std::int64_t kRoundsPerLaunch = 128;
  static constexpr double kRunMemory = 15.0 / 16.0;
  double recent_iterations_ = 16;  // a prior of one cut in 16 iterations
  double recent_cuts_ = 1;

  // Whether `plan` has prompt chunks: a run of it folds them (fold_prompts).
  static bool has_prompts(const BatchPlan& plan) { return plan.shape.prefill_sequences > 0; }
  // Whether `plan`'s prompt chunks, after all its decodes, each end a prompt: then sets the
  // run's sequences and contexts, and lowers `fewest_tokens_left` to the prompts' requests'.
  bool fold_prompts(const BatchPlan& plan, std::int64_t& fewest_tokens_left);
  // The sequences the run's later iterations decode, in plan order.
  std::span<const std::int64_t> sequences_of(const BatchPlan& plan) const;
};

template <class CheckUsage>
void DecodeRuns::report_later_iterations(const BatchPlan& plan, IServingObserver& observer,
                                         CheckUsage check_usage) {
  settle(plan);
  for (std::size_t k = 1; k < ends_.size(); ++k)
    check_usage(usages_[k - 1], ends_[k - 1]);
  observer.on_decode_run(DecodeRunIterations{first_, ends_, usages_, batches_});
}

}  // namespace servesim
