#pragma once

#include <cstdint>

#include "sim/core/sim_time.h"
#include "sim/workload/workload_source.h"

namespace servesim {

// A request's serving state on its replica. The KV cache holds `kv_tokens` tokens; while
// `prefilling`, the request is (re)computing its first `prefill_target()` tokens; after that,
// each iteration feeds its last generated token and produces the next one.
//
// The fields a decode iteration reads and writes come first and the struct is aligned to a
// cache line, so that walking a batch touches one line per request.
struct alignas(64) Request {
  RequestSpec spec;
  std::int64_t kv_tokens = 0;
  std::int64_t generated_tokens = 0;
  SimTime last_token;
  bool prefilling = true;
  bool in_flight = false;  // part of a batch still moving through the pipeline
  bool swapped = false;    // preempted by swap: its kv_tokens wait in host memory
  bool scheduled = false;  // has been in a batch at least once
  std::int32_t preemptions = 0;
  std::int32_t replica = -1;
  SimTime first_scheduled;
  SimTime first_token;

  // A fresh request prefills its prompt; one preempted by recompute re-prefills the prompt
  // and every token generated so far, and then produces its next token.
  std::int64_t prefill_target() const { return spec.prompt_tokens + generated_tokens; }
  std::int64_t final_tokens() const { return spec.prompt_tokens + spec.output_tokens; }
  bool finished() const { return generated_tokens >= spec.output_tokens; }
};

}  // namespace servesim
