#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>

#include "sim/core/error.h"
#include "sim/memory/kv_cache_allocator.h"
#include "sim/scheduler/batch_plan.h"
#include "sim/scheduler/request_queues.h"

namespace servesim {

// The most work one plan of a policy may hold; the replica checks every plan against it
// (invariant batch_token_budget). Unlimited by default.
struct BatchBudget {
  static constexpr std::int64_t kUnlimited = std::numeric_limits<std::int64_t>::max();
  std::int64_t prefill_tokens = kUnlimited;  // prompt tokens computed in one iteration
  std::int64_t tokens = kUnlimited;          // prompt plus decode tokens in one iteration
  std::int64_t sequences = kUnlimited;       // sequences in one iteration
};

// Forms the next batch of one replica. The scheduler owns its queues (RequestQueues, in
// the order of its IQueueOrder): requests routed to the replica join them through enqueue()
// and finished ones leave through retire(). A policy decides who joins a batch, how many
// tokens each computes and who is preempted; because each decision depends on the memory
// the previous one took, plan() applies them as it goes: it moves requests between the
// queues (request_lifecycle.h changes their state) and takes or releases KV memory through
// the allocator. It never schedules events or completes steps: the replica runs the batch
// and applies its results.
class IBatchScheduler {
 public:
  virtual ~IBatchScheduler() = default;

  // Why a request can never be served by this policy on this allocator, or nullopt.
  virtual std::optional<std::string> reject_reason(const RequestSpec& request,
                                                   const IKvCacheAllocator& allocator) const = 0;
  // A request routed to this replica joins the waiting queue.
  virtual void enqueue(Request* request) = 0;
  // Plans the next batch into `plan`, which arrives empty (BatchPlan::clear): its vectors may
  // keep their capacity from earlier plans, so that planning need not allocate. Requests
  // marked in_flight are busy in an earlier batch and must be left alone.
  virtual void plan(IKvCacheAllocator& allocator, BatchPlan& plan) = 0;
  // Finished requests (state Finished, memory already released) leave the running queue;
  // `finished` in the queue's order is the fast case.
  virtual void retire(std::span<Request* const> finished) = 0;
  virtual const RequestQueues& queues() const = 0;

  // Fixed for the scheduler's lifetime: the replica reads it once.
  virtual BatchBudget budget() const { return {}; }

  // Whether the replica may advance runs of decode iterations in bulk. A policy answers true
  // when this holds: after a plan that decodes every running request (none in flight) and
  // does nothing else (no admission, preemption or swap), a plan made with the queues
  // unchanged, the allocator having grown each of those requests by one token, decodes the
  // same requests in the same order again and does nothing else, for as long as the
  // allocator can grow each of them by one more token. (Typically: an admission or swap-in
  // that failed keeps failing while memory only fills and nobody leaves.)
  virtual bool decode_plans_repeat() const { return false; }
  // Whether the plan just made repeats as decode_plans_repeat promises: a policy whose
  // promise has exceptions (a plan that changed state the next plan reads) says so here.
  virtual bool last_plan_repeats() const { return true; }
  // Whether the plan just made, which decoded every running request and then computed the
  // last chunk of some prompts (nothing else), is followed by plans as decode_plans_repeat
  // promises after a decode-only one: made with the queues unchanged, each decodes every
  // running request, the prefilled ones last, and does nothing else, for as long as the
  // allocator can grow each by one more token. False (the default): such a plan is launched
  // alone.
  virtual bool last_plan_then_decodes() const { return false; }
  // Whether last_plan_repeats also speaks for a plan that decoded every running request and
  // preempted some others to make room (and did nothing else): a policy that works out, as
  // it plans such a step, that the next step would admit nobody answers true, and then the
  // plans after a preempting one may run in bulk too. Fixed for the scheduler's lifetime.
  virtual bool judges_preempting_plans() const { return false; }
  // Whether `request`, enqueued now, would change none of the plans that repeat
  // (decode_plans_repeat, last_plan_repeats) after the last plan(): a policy that admits in
  // queue order and stops at the first waiting request it cannot admit answers true when
  // `request` would queue behind a waiting one, which those plans do not admit. A decode run
  // then goes on past the request's arrival.
  virtual bool queues_behind_waiting(const Request& /*request*/) const { return false; }
  // A decode run stood for `plans` more plans after the last plan() (each the same plan
  // again): a policy that keeps state from plan to plan updates it as those plans would have.
  virtual void on_decode_plans_skipped(std::int64_t plans) { (void)plans; }
  // Decode runs through preemption (IDecodeRoundAllocator::decode_stretches), for a policy
  // that judges preempting plans (judges_preempting_plans): a run of the last plan may end
  // with a round in which the allocator finds no block and the newest requests of the batch
  // are preempted, and goes on past it when the policy judges that the plans after it
  // repeat, as last_plan_repeats would after planning it. In that round
  // `victims` (the newest first, each having computed `rounds` more tokens than now, its KV
  // dropped) leave the batch, `batch` requests decode, and then the allocator could admit a
  // request holding no cached block with at most `admissible_tokens` tokens. False (the
  // default): the run ends with that round.
  virtual bool repeats_after_preempting(std::span<Request* const> victims, std::int64_t rounds,
                                        std::int64_t batch, std::int64_t admissible_tokens) const {
    (void)victims;
    (void)rounds;
    (void)batch;
    (void)admissible_tokens;
    return false;
  }
  // Such a run completed: `victims` were preempted in it, as the plans of its rounds would
  // have preempted them (the allocator has released their KV). Called only by a policy that
  // judged so.
  virtual void preempted_in_run(std::span<Request* const> victims) {
    (void)victims;
    throw InvariantError("a decode run preempted for a scheduler that does not judge that");
  }
  // Speculative decoding (sim/speculative/): from now on each decoding request proposes up to
  // `num_speculative_tokens` drafts a step. Returns false for a scheduler that cannot.
  virtual bool speculate(std::int64_t /*num_speculative_tokens*/) { return false; }
};

// The shared base of the built-in schedulers: the queues, in first-come first-served order.
class QueueingScheduler : public IBatchScheduler {
 public:
  // `swap_capacity_tokens`: host memory for preemption by swap (0: recompute only).
  explicit QueueingScheduler(std::int64_t swap_capacity_tokens = 0)
      : queues_(order_, swap_capacity_tokens) {}

  void enqueue(Request* request) final { queues_.enqueue(request); }
  void retire(std::span<Request* const> finished) final { queues_.retire(finished); }
  const RequestQueues& queues() const final { return queues_; }

 protected:
  FirstComeFirstServed order_;
  RequestQueues queues_;
};

}  // namespace servesim
