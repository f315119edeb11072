#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>

#include "sim/core/error.h"
#include "sim/core/sim_time.h"
#include "sim/scheduler/request.h"

namespace servesim {

// The one place a request changes state or progress (see Request). Schedulers, the replica
// and the decode-run fast path call these; none of them writes the fields directly, so a new
// policy cannot get a transition subtly different.

// Waiting or Preempted -> Running: admitted holding `cached_tokens` of its tokens() already
// in the cache (0 without prefix caching), `host_tokens` of them loaded from a host tier;
// it prefills the rest. At its first admission a request whose KV a transfer brought
// (remote_kv_tokens) starts with at least those computed.
inline void admit(Request& request, std::int64_t cached_tokens = 0, std::int64_t host_tokens = 0) {
  if (request.tokens() > std::numeric_limits<std::int32_t>::max()) {
    throw InvariantError("request " + std::to_string(request.spec.id) + " holds " +
                         std::to_string(request.tokens()) + " tokens, more than 2^31");
  }
  request.state = RequestState::Running;
  if (request.preemptions == 0) {
    // At most tokens(), which fits 32 bits (checked above).
    request.cached_prompt_tokens = static_cast<std::int32_t>(cached_tokens);
    request.host_cached_prompt_tokens = static_cast<std::int32_t>(host_tokens);
  }
  request.computed_tokens = request.preemptions == 0
                                ? std::max<std::int64_t>(cached_tokens, request.remote_kv_tokens)
                                : cached_tokens;
  request.prefill_end_tokens = static_cast<std::int32_t>(request.tokens());
  request.lookahead_slots = 0;
}

// Swapped -> Running: its KV is back in the cache and it decodes on.
inline void resume_from_swap(Request& request) {
  request.state = RequestState::Running;
  request.lookahead_slots = 0;  // the computed tokens came back, nothing beyond them
}

// Running -> Preempted: its KV is dropped; on re-admission it recomputes its prompt and
// every generated token, then produces its next token.
inline void preempt_by_recompute(Request& request) {
  request.state = RequestState::Preempted;
  request.computed_tokens = 0;
  request.prefill_end_tokens = 0;
  request.lookahead_slots = 0;
  request.preemptions += 1;
}

// Running -> Swapped: its KV is copied to host memory, computed tokens and all.
inline void preempt_by_swap(Request& request) {
  request.state = RequestState::Swapped;
  request.preemptions += 1;
}

// Running -> Finished, once it has generated every output token.
inline void finish(Request& request) {
  request.state = RequestState::Finished;
}

// Waiting -> Rejected: it can never be served.
inline void reject(Request& request) {
  request.state = RequestState::Rejected;
}

// Joined a batch launched at `now`; its first batch is when it was first scheduled.
inline void schedule(Request& request, SimTime now) {
  if (!request.scheduled) {
    request.scheduled = true;
    request.first_scheduled = now;
  }
}

// The update rule: a step computed `tokens` of the request's uncomputed tokens and ended at
// `at`. A step whose tokens reach tokens() samples the next token, stamped `at` (its
// first_token when it is the first); returns whether it did. The time since the token
// before, for the gaps a caller reports, is `at` minus last_token as it was before the call.
inline bool complete_step(Request& request, std::int64_t tokens, SimTime at) {
  request.in_flight = false;
  request.computed_tokens += tokens;
  if (request.computed_tokens != request.tokens()) return false;
  request.generated_tokens += 1;
  if (request.generated_tokens == 1) request.first_token = at;
  request.last_token = at;
  return true;
}

// The rule applied `steps` times over, for a decoding request: `steps` more steps of one
// token each, the last ending at `last_at` (a decode run; the gaps are reported by the run).
inline void complete_decode_steps(Request& request, std::int64_t steps, SimTime last_at) {
  request.computed_tokens += steps;
  request.generated_tokens += steps;
  request.last_token = last_at;
}

// A speculative step of a decoding request, ended at `at`: it fed its last sampled token and
// `proposed` drafts (its KV slots for all of them allocated), the target accepted the first
// `accepted`, and it emits those plus one token of its own (the bonus, or the correction of
// the first rejected draft), all stamped `at`. The accepted drafts' KV stays computed; the
// slots of the rejected ones stay with the request as lookahead_slots, for its next step to
// write over, as vLLM keeps a request's blocks. `proposed` 0 is a plain decode step.
inline void complete_speculative_step(Request& request, std::int64_t proposed,
                                      std::int64_t accepted, SimTime at) {
  if (request.uncomputed_tokens() != 1 || accepted < 0 || accepted > proposed ||
      accepted + 1 > request.output_tokens_left()) {
    throw InvariantError("request " + std::to_string(request.spec.id) + ": a speculative step of " +
                         std::to_string(proposed) + " drafts, " + std::to_string(accepted) +
                         " accepted, does not fit its state");
  }
  const std::int64_t slots = std::max<std::int64_t>(request.lookahead_slots, proposed + 1);
  request.in_flight = false;
  request.computed_tokens += 1 + accepted;
  request.generated_tokens += 1 + accepted;
  request.lookahead_slots = static_cast<std::int32_t>(slots - 1 - accepted);
  request.last_token = at;
}

}  // namespace servesim
