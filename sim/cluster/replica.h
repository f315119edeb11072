#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/cluster/router.h"
#include "sim/cluster/serving_observer.h"
#include "sim/hardware/execution_time_model.h"
#include "sim/memory/kv_cache_allocator.h"
#include "sim/scheduler/batch_scheduler.h"

namespace servesim {

// Host memory for preemption by swap, and the link KV blocks cross to reach it.
struct SwapLink {
  std::int64_t capacity_tokens = 0;  // 0: no swap space, preemption recomputes
  double bytes_per_token = 0;        // KV bytes of one token on one GPU
  double bytes_per_s = 0;            // achieved host-link bandwidth of one GPU
};

// One model instance on TP x PP GPUs. It runs batches: the scheduler plans one, the cost
// model prices it, and when it completes the replica applies its results (tokens emitted,
// finished requests released). With P pipeline stages up to P batches are in flight: a new
// one may start each time the first stage frees, and each takes P stage times to finish.
//
// Bulk decode. When a plan decodes every running request and does nothing else, and the
// scheduler promises that such plans repeat (IBatchScheduler::decode_plans_repeat), the
// iterations that follow are known until a request finishes or the allocator would refuse a
// token: the replica prices each of them (O(1) apiece through BatchShape) and launches them
// as one decode run, with one completion event at the end of the last. A request arriving
// for the replica cuts the run after the iteration in flight at that instant, which is where
// one-at-a-time iterations would have let it in. Every metric equals the one-at-a-time
// result: each iteration is reported with its own start, duration and KV usage, and token
// gaps are reported per iteration in both modes. Off with pipeline parallelism (several
// batches in flight) and when disabled (engine.bulk_decode, or a router that reads KV use).
//
// Runtime invariants, checked at every iteration at O(1) cost: kv_within_capacity,
// blocks_conserved (the KV usage categories partition the capacity), batch_token_budget
// (the plan stays within the scheduler's BatchBudget).
class Replica {
 public:
  Replica(std::int32_t id, std::unique_ptr<IKvCacheAllocator> allocator,
          std::unique_ptr<IBatchScheduler> scheduler, const IExecutionTimeModel& time_model,
          std::int64_t pipeline_stages, std::int64_t max_sequence_tokens,
          IServingObserver& observer, const SwapLink& swap = {}, bool bulk_decode = true);

  std::int32_t id() const { return id_; }
  std::optional<std::string> reject_reason(const RequestSpec& request) const;
  void enqueue(Request* request);

  struct Launch {
    std::int64_t batch = 0;
    SimTime stage_free_at;  // when the next batch may start
    SimTime done_at;        // when this batch's tokens are out
  };
  // Plans and starts a batch at `now` if the first stage is free and there is work.
  std::optional<Launch> try_launch(SimTime now);
  // Applies the results of a launched batch at its completion time and returns the requests
  // it finished, already released and out of the queues, in arrival order.
  std::vector<Request*> complete(std::int64_t batch, SimTime now);
  // A request arrives for this replica at `now` while a decode run is in flight: the run is
  // cut after the iteration in flight at `now` (or ending at `now`) and renamed. Returns the
  // renamed batch, which the caller must complete at its done_at (at once when that is
  // `now`); nullopt when no run is in flight or it ends after `now` anyway.
  std::optional<Launch> cut_decode_run(SimTime now);
  // True, once, for a batch whose completion event was superseded by cut_decode_run.
  bool drop_superseded(std::int64_t batch) { return std::erase(superseded_, batch) > 0; }
  void disable_bulk_decode() { bulk_decode_ = false; }
  std::int64_t iterations() const { return iterations_; }
  bool has_work() const {
    return !queues_.waiting.empty() || !queues_.running.empty() || !queues_.swapped.empty();
  }
  // True while the first pipeline stage is still working on the last batch launched.
  bool stage_busy(SimTime now) const { return now < stage_free_at_; }
  ReplicaLoad load() const;
  const IKvCacheAllocator& allocator() const { return *allocator_; }

 private:
  std::int32_t id_;
  std::unique_ptr<IKvCacheAllocator> allocator_;
  std::unique_ptr<IBatchScheduler> scheduler_;
  const IExecutionTimeModel& time_model_;
  std::int64_t pipeline_stages_;
  std::int64_t max_sequence_tokens_;  // the model's (or --max-len) maximum context
  IServingObserver& observer_;
  SwapLink swap_;
  bool bulk_decode_;
  BatchBudget budget_;  // the scheduler's, checked every iteration

  // A decode run: the in-flight batch `batch` (its first iteration) and the iterations that
  // repeat it, ending at ends[0], ends[1], ...
  struct DecodeRun {
    std::int64_t batch = -1;  // -1: none in flight
    std::vector<SimTime> ends;
    std::vector<double> durations_s;  // the iterations' durations, as priced at launch
    std::vector<KvUsage> usages;      // the KV memory of iterations 2, 3, ...
    IterationRecord first;            // the first iteration's record
    // The waiting queue's head as every iteration of the run saw it at launch (a request
    // arriving later cuts the run, but may be queued before the run completes).
    std::int64_t next_final_tokens = 0;
  };
  // How many iterations a decode run of `plan` would last (the plan's own included), or 1
  // when it cannot start one.
  std::int64_t decode_run_steps(const BatchPlan& plan);
  // Starts the decode run of `batch`, priced in run_.durations_s, whose first iteration
  // ends at `first_end`.
  void start_decode_run(std::int64_t batch, SimTime first_end);
  void check_usage(const KvUsage& usage, SimTime now) const;
  [[noreturn, gnu::noinline, gnu::cold]] void usage_broken(const KvUsage& usage, SimTime now) const;
  void check_budget(const BatchPlan& plan, SimTime now) const;
  IterationRecord record_of(SimTime start, SimTime duration, const BatchPlan& plan,
                            const KvUsage& usage) const;
  // The tokens of a completed iteration ending at `at`; with `later_steps` > 0, also the
  // state after that many more decode steps ending at `last_at` (a decode run). Appends the
  // requests of the plan that have now generated all their tokens to `finished`.
  void emit_tokens(const BatchPlan& plan, SimTime at, std::vector<Request*>& finished,
                   std::int64_t later_steps = 0, SimTime last_at = {});
  std::int64_t next_final_tokens() const {
    return queues_.waiting.empty() ? 0 : queues_.waiting.front()->final_tokens();
  }

  RequestQueues queues_;
  // Batches launched and not yet complete (at most one per pipeline stage), oldest first.
  struct InFlight {
    std::int64_t batch;
    BatchPlan plan;
  };
  std::vector<InFlight> in_flight_;
  // Plans of completed batches, cleared when taken, so that planning reuses their vectors.
  std::vector<BatchPlan> spare_plans_;
  BatchPlan spare_plan() {
    if (spare_plans_.empty()) return {};
    BatchPlan plan = std::move(spare_plans_.back());
    spare_plans_.pop_back();
    plan.clear();
    return plan;
  }
  std::int64_t next_batch_ = 0;
  std::int64_t outstanding_ = 0;
  std::int64_t iterations_ = 0;
  SimTime stage_free_at_;
  DecodeRun run_;
  // Runs are priced up front; the longest grows while runs end uncut and shrinks when cut,
  // so pricing wasted on iterations that a cut drops stays a fraction of the work. Pricing
  // a round costs about an eighth of what a run costs per sequence of its batch (planning,
  // emitting tokens, handing out blocks; measured in scenario 2 of bench/), so the limit
  // stays at 8 rounds per sequence or more.
  static constexpr std::int64_t kRoundsPerSequence = 8;
  std::int64_t run_limit_ = 16;
  std::vector<std::int64_t> superseded_;  // a few at most: cut runs whose events are pending
};

}  // namespace servesim
