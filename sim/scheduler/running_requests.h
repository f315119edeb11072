#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "sim/memory/kv_cache_allocator.h"
#include "sim/scheduler/batch_plan.h"

namespace servesim {

// Calls visit(request) for each running request a plan may touch (not in flight), oldest
// first, until it returns false: `running` is kept in id order (RequestQueues::add_running). The
// walk is over the list itself, not a copy, so `visit` may preempt: the visited request or others,
// which leave `running`; the walk goes on with the oldest request newer than the one visited.
// Requests preempted by this plan are therefore not visited again.
template <class Visit>
void for_each_schedulable_oldest_first(RequestQueues& queues, Visit visit) {
  std::vector<Request*>& running = queues.running;
  for (std::size_t i = 0; i < running.size();) {
    Request* request = running[i];
    if (request->in_flight) {
      ++i;
      continue;
    }
    if (!visit(request)) return;
    if (i < running.size() && running[i] == request) {
      ++i;  // the usual case: nobody left
    } else {
      i = static_cast<std::size_t>(
          std::upper_bound(running.begin(), running.end(), request->spec.id,
                           [](std::int64_t id, const Request* r) { return id < r->spec.id; }) -
          running.begin());
    }
  }
}

enum class GrowthOutcome {
  Grown,          // the allocator now holds `tokens` more tokens for the request
  PreemptedSelf,  // the request was the newest preemptible one and went back to waiting
  NoRoom,         // it keeps its memory and waits for batches in flight
};

// Every running request not in flight and not prefilling decodes one token, oldest first:
// each is grown by one token (grow_or_preempt, preempting as vLLM does when memory runs out)
// and added to the plan. The allocator grows the batch in one call (grow_each) until it
// refuses one; only then does preemption walk the queues.
// `scratch` is working space a scheduler keeps from plan to plan, so planning does not
// allocate.
struct DecodeScratch {
  std::vector<Request*> requests;
  std::vector<std::int64_t> sequences;
};
void decode_running_oldest_first(RequestQueues& queues, IKvCacheAllocator& allocator,
                                 BatchPlan& plan, DecodeScratch& scratch);

// Admits waiting requests first-come first-served, each with its whole prompt (prompt plus
// generated tokens after a preemption), while the prompt tokens fit `token_budget`, fewer
// than `max_running` requests run and the allocator can admit them; stops at the first that
// does not fit, so no request overtakes an older one.
void admit_whole_prompts_in_order(RequestQueues& queues, IKvCacheAllocator& allocator,
                                  BatchPlan& plan, std::int64_t token_budget,
                                  std::int64_t max_running);

// grow_or_preempt once the allocator has refused to grow the request as things stand.
GrowthOutcome preempt_to_grow(Request* request, std::int64_t tokens, RequestQueues& queues,
                              IKvCacheAllocator& allocator, BatchPlan& plan);

// Makes room for `tokens` more tokens of a running request, preempting the newest
// preemptible running requests by recompute while the allocator cannot grow it (vLLM's
// rule), and grows it. Requests already in `plan` are never victims, so granted work stands.
// While a batch is in flight (pipeline parallelism) a request that cannot grow waits
// instead, keeping its memory: its in-flight neighbours cannot be victims, they may free
// memory when they complete, and preempting some requests without winning the room would
// leave a plan of preemptions and no work. Plans that launch nothing let the pipeline
// drain, after which the rule above applies again, so waiting never deadlocks.
inline GrowthOutcome grow_or_preempt(Request* request, std::int64_t tokens, RequestQueues& queues,
                                     IKvCacheAllocator& allocator, BatchPlan& plan) {
  if (allocator.try_grow(request->spec.id, tokens)) return GrowthOutcome::Grown;
  return preempt_to_grow(request, tokens, queues, allocator, plan);
}

}  // namespace servesim
