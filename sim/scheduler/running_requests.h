#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "sim/memory/kv_cache_allocator.h"
#include "sim/scheduler/batch_plan.h"
#include "sim/scheduler/request_queues.h"

namespace servesim {

// Building blocks the built-in schedulers plan with. They move requests between the queues
// (RequestQueues) and change their state (request_lifecycle.h); none does either by hand.

// Calls visit(request) for each running request a plan may touch (not in flight), in queue
// order, until it returns false. The walk is over the list itself, not a copy, so `visit`
// may preempt: the visited request or others after it in the queue (preemption's victims
// come from the end), which leave `running`; the walk goes on with the request after the
// one visited. Requests preempted by this plan are therefore not visited again.
template <class Visit>
void for_each_schedulable_in_order(const RequestQueues& queues, Visit visit) {
  const std::vector<Request*>& running = queues.running();
  for (std::size_t i = 0; i < running.size();) {
    Request* request = running[i];
    if (request->in_flight) {
      ++i;
      continue;
    }
    if (!visit(request)) return;
    // The visited request still at i: nobody before it left. Gone: its successor is at i.
    if (i < running.size() && running[i] == request) ++i;
  }
}

// What the allocator's prefix cache knows of a request: its block identities (none without
// content) and the tokens it holds now.
inline PrefixKey prefix_key(const Request& request) {
  PrefixKey key;
  key.sequence = request.spec.id;
  if (request.block_hashes) key.block_hashes = *request.block_hashes;
  key.tokens = request.tokens();
  return key;
}

// The leading tokens a waiting request would be admitted with computed: the prefix the cache
// holds (`key` is its prefix_key) and, at its first admission, those a KV transfer brought
// (Request::remote_kv_tokens), whichever are more.
inline std::int64_t computed_at_admission(const IKvCacheAllocator& allocator,
                                          const Request& request, const PrefixKey& key) {
  const std::int64_t cached = allocator.cached_prefix_tokens(key);
  if (request.preemptions != 0) return cached;
  return std::max<std::int64_t>(cached, request.remote_kv_tokens);
}

// Admits the first waiting request holding `tokens` of its tokens (its cached prefix, if
// any, and its whole prefill or the first chunk of it): the allocator takes them, the
// request runs, and the plan computes those of them the cache does not already hold. The
// caller has checked that it fits (can_admit_prefix).
void admit_first_waiting(RequestQueues& queues, IKvCacheAllocator& allocator, BatchPlan& plan,
                         std::int64_t tokens);

enum class GrowthOutcome {
  Grown,          // the allocator now holds `tokens` more tokens for the request
  PreemptedSelf,  // the request was the newest preemptible one and went back to waiting
  NoRoom,         // it keeps its memory and waits for batches in flight
};

// Every running request not in flight and not prefilling decodes one token, in queue order:
// each is grown by one token (grow_or_preempt, preempting as vLLM does when memory runs out)
// and added to the plan. The allocator grows the batch in one call (grow_each) until it
// refuses one; only then does preemption walk the queues.
// `scratch` is working space a scheduler keeps from plan to plan, so planning does not
// allocate. With `only_if_all`, it does nothing and returns false unless every running
// request decodes (none in flight or prefilling); otherwise it returns true.
struct DecodeScratch {
  std::vector<Request*> requests;
  std::vector<std::int64_t> sequences;
  bool some_in_flight = true;  // whether any running request was in flight at the gathering
};
bool decode_running_in_order(RequestQueues& queues, IKvCacheAllocator& allocator, BatchPlan& plan,
                             DecodeScratch& scratch, bool only_if_all = false);
// Its two halves, for a policy that looks at the batch before it grows (sglang):
// gather_decoding puts the running requests a decode step takes (neither in flight nor
// prefilling), in queue order, and their ids into `scratch`, and returns whether that is
// every running request; decode_gathered_in_order then grows and plans them.
bool gather_decoding(const RequestQueues& queues, DecodeScratch& scratch);
void decode_gathered_in_order(RequestQueues& queues, IKvCacheAllocator& allocator, BatchPlan& plan,
                              DecodeScratch& scratch);

// Admits waiting requests in queue order, each with its whole prefill (prompt plus
// generated tokens after a preemption), while the tokens to compute (those the prefix cache
// does not hold) fit `token_budget`, fewer
// than `max_running` requests run and the allocator can admit them; stops at the first that
// does not fit, so no request overtakes an earlier one.
void admit_whole_prompts_in_order(RequestQueues& queues, IKvCacheAllocator& allocator,
                                  BatchPlan& plan, std::int64_t token_budget,
                                  std::int64_t max_running);

// grow_or_preempt once the allocator has refused to grow the request as things stand.
GrowthOutcome preempt_to_grow(Request* request, std::int64_t tokens, RequestQueues& queues,
                              IKvCacheAllocator& allocator, BatchPlan& plan);
// preempt_to_grow but for the grow itself: Grown means the allocator can now grow the
// request by `tokens`, and has not yet. `some_may_be_in_flight` false: the caller knows that
// no running request is in flight (planning marks none), which spares a walk of the queue.
GrowthOutcome preempt_for_room(Request* request, std::int64_t tokens, RequestQueues& queues,
                               IKvCacheAllocator& allocator, BatchPlan& plan,
                               bool some_may_be_in_flight = true);

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
