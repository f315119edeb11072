#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/cluster/decode_runs.h"
#include "sim/cluster/max_len_admission.h"
#include "sim/cluster/router.h"
#include "sim/cluster/serving_observer.h"
#include "sim/hardware/execution_time_model.h"
#include "sim/memory/kv_cache_allocator.h"
#include "sim/scheduler/batch_scheduler.h"
#include "sim/speculative/speculation.h"

namespace servesim {

// The link KV blocks cross to reach host memory: when preemption swaps them out, and when a
// prefix cache's host tier loads them back.
struct SwapLink {
  double bytes_per_token = 0;  // KV bytes of one token on one GPU
  double bytes_per_s = 0;      // achieved host-link bandwidth of one GPU
};

// One model instance on TP x PP GPUs. It runs batches: the scheduler plans one, the cost
// model prices it, and when it completes the replica completes every step of it
// (request_lifecycle.h: tokens computed, tokens sampled) and retires the finished requests.
// With P pipeline stages up to P batches are in flight: a new one may start each time the
// first stage frees, and each takes P stage times to finish.
//
// Two modes: plain (every iteration launched on its own) and bulk decoding (DecodeRuns, the
// fast path), on when `bulk_decode` is asked for, the pipeline has one stage, the scheduler's
// decode plans repeat and the allocator implements IDecodeRoundAllocator.
//
// Runtime invariants, checked at every iteration at O(1) cost: kv_within_capacity,
// blocks_conserved (the KV usage categories partition the capacity), batch_token_budget
// (the plan stays within the scheduler's BatchBudget).
class Replica {
 public:
  Replica(std::int32_t id, std::unique_ptr<IKvCacheAllocator> allocator,
          std::unique_ptr<IBatchScheduler> scheduler, const IExecutionTimeModel& time_model,
          std::int64_t pipeline_stages, std::int64_t max_sequence_tokens,
          IServingObserver& observer, const SwapLink& swap = {}, bool bulk_decode = true,
          MaxLenPolicy max_len_policy = MaxLenPolicy::Cut);

  std::int32_t id() const { return id_; }
  // How this replica takes a request on arrival: rejected with the reason when it can never
  // be served, or served as `served`, whose output the maximum sequence length may have cut
  // (max_len_admission.h); the scheduler's limits apply to the request as served.
  LengthAdmission admission(const RequestSpec& request) const;
  // The request reaches this replica's engine at `now`.
  void enqueue(Request* request, SimTime now);

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
  // A decode run in flight is cut (DecodeRuns::cut) and returns its new completion time,
  // which replaces the one launched (at once when it is `now`); nullopt when no run is in
  // flight or its end stands.
  // `newcomer` reaches the replica at `now` (its enqueue follows): the run ends after the
  // iteration in flight, or ending, at `now`, and when the replica plans ahead, after the one
  // planned while that ran; it goes on when the scheduler says the newcomer changes none of
  // its plans (IBatchScheduler::queues_behind_waiting).
  std::optional<SimTime> cut_decode_run(SimTime now, const Request& newcomer);
  // The allocator will change when the batch in flight completes (a reservation waits for
  // it): the run ends after the iteration in flight, or ending, at `now`.
  std::optional<SimTime> cut_decode_run(SimTime now);
  // The caller changes the allocator at `now`, after that instant's launches (a KV transfer's
  // end): the run ends after the iteration in flight, and the iterations it kept grow the
  // allocator now, as their launches had before the change.
  std::optional<SimTime> settle_decode_run(SimTime now);
  void disable_bulk_decode() { runs_.reset(); }
  // A prefill replica of a disaggregated deployment: a finished request's KV blocks stay
  // allocated until release_held_kv (its transfer to the decode side has completed).
  void hold_finished_kv() { holds_finished_kv_ = true; }
  void release_held_kv(std::int64_t sequence) { allocator_->release(sequence); }
  // A decode replica sets `tokens` of KV aside for request `request`'s prompt on its way, if
  // they fit (a sequence of its own in the allocator), and frees them when it has arrived.
  bool reserve_kv(std::int64_t request, std::int64_t tokens);
  void release_reserved_kv(std::int64_t request) { allocator_->release(kReservedKv + request); }
  // Whether KV room for prompts on their way waits on this replica (DecodeReservations), which
  // looks for it again at every iteration's end: memory a plan frees (by preemption) may take a
  // reservation then, so such a plan runs alone rather than start a decode run. The cluster
  // says so before each launch.
  void set_room_awaited(bool awaited) { room_awaited_ = awaited; }
  // Others look this replica's prefix cache up between its iterations (a router that reads
  // prefixes, a disaggregated deployment's hand-off): a plan that may name blocks (requests
  // with content) then runs alone, for a decode run names its blocks only when it ends.
  void prefix_cache_read_from_outside() { cache_read_from_outside_ = true; }
  // Whether a launched batch has not completed yet.
  bool batch_in_flight() const { return !in_flight_.empty(); }
  // Between events at `now`: no iteration this replica reports from here on starts before
  // the time returned (a decode run in flight reports its later iterations when it ends).
  SimTime unreported_iterations_from(SimTime now) const {
    return runs_ && runs_->in_flight() ? std::min(now, runs_->first_end()) : now;
  }
  // Speculative decoding from now on (`speculation` outlives the replica): the scheduler
  // plans drafts, steps are priced with their proposing and completed by `speculation`, and
  // bulk decoding is off. Throws InputError when the scheduler cannot speculate.
  void speculate(Speculation& speculation);
  // From now on each step's batch is planned while the step before it runs, as an engine
  // whose host work overlaps the GPU (vLLM's async scheduling, SGLang's overlap scheduler)
  // plans it: a request that reaches the engine during step k first runs in step k + 2, or
  // in step k + 1 when nothing was left to plan for it at k's launch. One pipeline stage only.
  void plan_one_step_ahead();
  std::int64_t iterations() const { return iterations_; }
  bool has_work() const { return !queues_.empty(); }
  // True while the first pipeline stage is still working on the last batch launched.
  bool stage_busy(SimTime now) const { return now < stage_free_at_; }
  ReplicaView view() const;
  const IKvCacheAllocator& allocator() const { return *allocator_; }

 private:
  // Reservations' sequence ids: above every request's.
  static constexpr std::int64_t kReservedKv = std::int64_t{1} << 62;
  // Completes every step of a batch that ended at `at`; for a decode run (the one in
  // runs_, just finished), also the later decode steps of each of its requests. Appends the
  // requests of the plan that have now generated all their tokens to `finished`.
  template <bool kDecodeRun>
  void complete_steps(const BatchPlan& plan, SimTime at, std::vector<Request*>& finished);
  // The plan's steps are complete: the blocks they computed join the prefix cache.
  void commit_computed(const BatchPlan& plan);
  // The iterations a launched plan runs for: more than one when it starts a decode run, which
  // may not pass what its end may change (named blocks, awaited room, staged requests).
  std::int64_t run_steps_for(const BatchPlan& plan);
  // The time of a plan launched alone: the cost model's, its copies over the host link and,
  // speculating, its proposing.
  double step_price_s(const BatchPlan& plan) const;
  // Whether a step of the plan, or of a decode run it starts, computes a block of some
  // request's content (which another request may hit), rather than only blocks past it.
  bool names_content(const BatchPlan& plan) const;
  // Planning ahead: hands the scheduler the requests that reached the engine by the last
  // launch (the plan of the step now starting was made then), or every one when the
  // scheduler would have nothing to plan without them.
  void release_staged();
  // Whether every staged request would queue behind a waiting one (queues_behind_waiting).
  bool staged_queue_behind_waiting() const;
  // The decode run in flight (there is one) is cut: the stage frees at its new end.
  std::optional<SimTime> cut_run(SimTime now, RunCut cut);
  std::int64_t next_final_tokens() const {
    const auto& waiting = queues_.waiting();
    return waiting.empty() ? 0 : waiting.front()->final_tokens();
  }

  std::int32_t id_;
  std::unique_ptr<IKvCacheAllocator> allocator_;
  std::unique_ptr<IBatchScheduler> scheduler_;
  const RequestQueues& queues_;  // the scheduler's
  const IExecutionTimeModel& time_model_;
  std::int64_t pipeline_stages_;
  std::int64_t max_sequence_tokens_;  // the model's (or --max-len) maximum context
  MaxLenPolicy max_len_policy_;
  IServingObserver& observer_;
  SwapLink swap_;
  BatchBudget budget_;                  // the scheduler's, checked every iteration
  std::optional<DecodeRuns> runs_;      // the bulk-decoding mode; empty: plain
  Speculation* speculation_ = nullptr;  // speculative decoding; null: none
  bool holds_finished_kv_ = false;
  bool room_awaited_ = false;
  bool cache_read_from_outside_ = false;

  // Batches launched and not yet complete (at most one per pipeline stage), oldest first.
  struct InFlight {
    std::int64_t batch;
    BatchPlan plan;
  };
  std::vector<InFlight> in_flight_;
  // Plans of completed batches, cleared when taken, so that planning reuses their vectors.
  std::vector<BatchPlan> spare_plans_;
  std::vector<Request*> preempted_;  // complete's working space: a run's preempted requests
  BatchPlan spare_plan();
  std::int64_t next_batch_ = 0;
  std::int64_t outstanding_ = 0;
  std::int64_t iterations_ = 0;
  SimTime stage_free_at_;
  // Planning ahead (plan_one_step_ahead): requests that arrived while a batch was in flight,
  // with their arrival times, oldest first, and when the last batch was launched.
  bool plans_ahead_ = false;
  struct Staged {
    Request* request;
    SimTime arrived;
  };
  std::vector<Staged> staged_;
  SimTime last_launch_;
};

}  // namespace servesim
