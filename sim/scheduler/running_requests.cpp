#include "sim/scheduler/running_requests.h"

#include <algorithm>
#include <span>

#include "sim/memory/decode_round_allocator.h"
#include "sim/scheduler/preemption.h"
#include "sim/scheduler/request_lifecycle.h"

namespace servesim {

namespace {

bool any_in_flight(const RequestQueues& queues) {
  return std::any_of(queues.running().begin(), queues.running().end(),
                     [](const Request* request) { return request->in_flight; });
}

}  // namespace

void admit_first_waiting(RequestQueues& queues, IKvCacheAllocator& allocator, BatchPlan& plan,
                         std::int64_t tokens) {
  Request* request = queues.pop_waiting();
  const PrefixAdmission found =
      allocator.admit_prefix(prefix_key(*request), tokens, request->final_tokens());
  admit(*request, found.cached_tokens, found.host_tokens);
  queues.add_running(request);
  plan.cached_tokens += found.cached_tokens;
  plan.host_load_tokens += found.host_tokens;
  plan.add_prefill(request, tokens - request->computed_tokens);
}

GrowthOutcome preempt_for_room(Request* request, std::int64_t tokens, RequestQueues& queues,
                               IKvCacheAllocator& allocator, BatchPlan& plan,
                               bool some_may_be_in_flight) {
  if (some_may_be_in_flight && any_in_flight(queues)) return GrowthOutcome::NoRoom;
  while (!allocator.can_grow(request->spec.id, tokens)) {
    Request* victim = newest_preemptible(queues, plan);
    if (victim == nullptr) return GrowthOutcome::NoRoom;
    preempt(victim, queues, allocator, plan);
    if (victim == request) return GrowthOutcome::PreemptedSelf;
  }
  return GrowthOutcome::Grown;
}

GrowthOutcome preempt_to_grow(Request* request, std::int64_t tokens, RequestQueues& queues,
                              IKvCacheAllocator& allocator, BatchPlan& plan) {
  const GrowthOutcome outcome = preempt_for_room(request, tokens, queues, allocator, plan);
  if (outcome == GrowthOutcome::Grown) allocator.grow(request->spec.id, tokens);
  return outcome;
}

bool gather_decoding(const RequestQueues& queues, DecodeScratch& scratch) {
  const std::vector<Request*>& running = queues.running();
  std::vector<Request*>& decoding = scratch.requests;
  std::vector<std::int64_t>& sequences = scratch.sequences;
  decoding.resize(running.size());
  sequences.resize(running.size());
  std::size_t count = 0;
  bool in_flight = false;
  for (std::size_t i = 0; i < running.size(); ++i) {
    Request* request = running[i];
    // The requests are scattered over the heap: fetch a few ahead.
    if (i + 8 < running.size()) __builtin_prefetch(running[i + 8]);
    decoding[count] = request;
    sequences[count] = request->spec.id;
    in_flight = in_flight || request->in_flight;
    count += static_cast<std::size_t>(!request->in_flight && !request->prefilling());
  }
  scratch.some_in_flight = in_flight;
  decoding.resize(count);
  sequences.resize(count);
  return count == running.size();
}

void decode_gathered_in_order(RequestQueues& queues, IKvCacheAllocator& allocator, BatchPlan& plan,
                              DecodeScratch& scratch) {
  std::vector<Request*>& decoding = scratch.requests;
  std::vector<std::int64_t>& sequences = scratch.sequences;
  std::size_t next = 0;
  while (next < decoding.size()) {
    // After a refusal the allocator goes on with the batch it grew so far (grow_each_after).
    const std::size_t grown =
        grow_each(allocator, std::span(sequences).subspan(next), 1, /*after=*/next > 0);
    plan.add_decodes(std::span(decoding).subspan(next, grown),
                     std::span(sequences).subspan(next, grown));
    next += grown;
    if (next == decoding.size()) return;
    // The allocator refused this one: make room by preemption, as one grow at a time would;
    // with room made, the next grow_each grows it first.
    Request* request = decoding[next];
    const std::size_t preempted_before = plan.preempted.size();
    if (preempt_for_room(request, 1, queues, allocator, plan, scratch.some_in_flight) !=
        GrowthOutcome::Grown) {
      ++next;
    }
    const std::span<Request* const> victims = std::span(plan.preempted).subspan(preempted_before);
    if (victims.empty()) continue;
    // Victims come after the request in the queue (never in the plan): they left `running`.
    std::size_t kept = next;
    for (std::size_t i = next; i < decoding.size(); ++i) {
      if (std::find(victims.begin(), victims.end(), decoding[i]) == victims.end()) {
        decoding[kept] = decoding[i];
        sequences[kept] = sequences[i];
        ++kept;
      }
    }
    decoding.resize(kept);
    sequences.resize(kept);
  }
}

bool decode_running_in_order(RequestQueues& queues, IKvCacheAllocator& allocator, BatchPlan& plan,
                             DecodeScratch& scratch, bool only_if_all) {
  if (!gather_decoding(queues, scratch) && only_if_all) return false;
  decode_gathered_in_order(queues, allocator, plan, scratch);
  return true;
}

void admit_whole_prompts_in_order(RequestQueues& queues, IKvCacheAllocator& allocator,
                                  BatchPlan& plan, std::int64_t token_budget,
                                  std::int64_t max_running) {
  while (!queues.waiting().empty()) {
    const Request* request = queues.waiting().front();
    const std::int64_t tokens = request->tokens();
    // The budget counts the tokens computed: those the prefix cache does not hold.
    const PrefixKey key = prefix_key(*request);
    const std::int64_t computed = tokens - allocator.cached_prefix_tokens(key);
    if (computed > token_budget) break;
    if (static_cast<std::int64_t>(queues.running().size()) >= max_running) break;
    if (!allocator.can_admit_prefix(key, tokens, request->final_tokens())) break;
    admit_first_waiting(queues, allocator, plan, tokens);
    token_budget -= computed;
  }
}

}  // namespace servesim
