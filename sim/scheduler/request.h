#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "sim/core/sim_time.h"
#include "sim/workload/workload_source.h"

namespace servesim {

// Where a request is in its life on a replica. Every change of state, and of the progress
// counters below, is made by the functions of request_lifecycle.h and nowhere else.
enum class RequestState : std::uint8_t {
  Waiting,    // queued, never admitted: holds no KV memory
  Running,    // admitted: the allocator holds its KV memory
  Preempted,  // preempted by recompute: queued again, its KV memory dropped
  Swapped,    // preempted by swap: its KV waits in host memory
  Finished,   // generated every output token and left the replica
  Rejected,   // could never be served
};

// A request's serving state on its replica. Progress is one number against a target, as in
// vLLM V1: `computed_tokens` (tokens whose K and V are in the cache) catches up with
// tokens() (the prompt plus every token generated so far). A step may compute any number of
// a request's uncomputed tokens (a whole prompt, a chunk of it, the one token a decode
// feeds back); the step whose tokens reach tokens() samples the next token, which makes
// tokens() one longer. A request (re)admitted from the queue prefills until its computed
// tokens reach `prefill_end_tokens`, which is tokens() at admission, and decodes after
// that: one token per step.
//
// The fields a decode iteration reads and writes fill the first 64 bytes and the struct is
// aligned to a cache line, so that walking a batch touches one line per request.
struct alignas(64) Request {
  RequestSpec spec;
  std::int64_t computed_tokens = 0;
  std::int64_t generated_tokens = 0;
  SimTime last_token;
  // 32 bits keep the fields above and these in one cache line; admit() checks the range.
  std::int32_t prefill_end_tokens = 0;
  RequestState state = RequestState::Waiting;
  bool in_flight = false;    // part of a batch still moving through the pipeline
  bool scheduled = false;    // has been in a batch at least once
  bool has_content = false;  // block_hashes is set: a prefix cache names its blocks
  std::int32_t preemptions = 0;
  std::int32_t replica = -1;
  SimTime first_scheduled;
  SimTime first_token;
  // The output the workload asked for; spec.output_tokens is what is served, less when the
  // maximum sequence length cut it (sim/cluster/max_len_admission.h). Set on arrival.
  std::int64_t requested_output_tokens = 0;
  // The identities of its full blocks at the prefix cache's block size (block_hashes in
  // sim/workload/token_content.h), as far as the workload describes its tokens; null when
  // no prefix cache runs or the workload does not say. Set on arrival.
  std::shared_ptr<const std::vector<std::uint64_t>> block_hashes;
  // Speculative decoding: KV slots the allocator holds for the request beyond its computed
  // tokens, those of drafts its last verification rejected; its next step writes over them
  // (sim/scheduler/verification_planning.h). 0 without speculation.
  std::int32_t lookahead_slots = 0;
  // Prompt tokens found in the prefix cache at its first admission (0 without caching); 32
  // bits, as prefill_end_tokens, keep the request in two cache lines.
  std::int32_t cached_prompt_tokens = 0;
  std::int32_t host_cached_prompt_tokens = 0;  // of those, loaded from a host tier
  // On a decode replica of a disaggregated deployment: the leading tokens whose KV a transfer
  // from the prefill side brought, which its first admission takes as computed (0 elsewhere).
  std::int32_t remote_kv_tokens = 0;

  std::int64_t tokens() const { return spec.prompt_tokens + generated_tokens; }
  // Tokens a step may still compute before the request samples its next token.
  std::int64_t uncomputed_tokens() const { return tokens() - computed_tokens; }
  std::int64_t final_tokens() const { return spec.prompt_tokens + spec.output_tokens; }
  std::int64_t output_tokens_left() const { return spec.output_tokens - generated_tokens; }
  // Admitted and not yet through its (re)prefill.
  bool prefilling() const { return computed_tokens < prefill_end_tokens; }
  bool finished() const { return generated_tokens >= spec.output_tokens; }
  std::int64_t cut_output_tokens() const { return requested_output_tokens - spec.output_tokens; }
};
static_assert(offsetof(Request, has_content) < 64, "the hot fields of a request share a line");
static_assert(sizeof(Request) == 128, "a request fills two cache lines");

}  // namespace servesim
