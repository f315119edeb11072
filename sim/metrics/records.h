#pragma once

#include <cstdint>
#include <string>

namespace servesim {

// What happened to one request. Times are simulated seconds since the start of the run;
// a rejected request has only its arrival time and the reason.
struct RequestRecord {
  std::int64_t id = 0;
  std::int32_t replica = -1;
  double arrival_s = 0;
  double first_scheduled_s = 0;  // first iteration that computed any of its tokens
  double first_token_s = 0;      // end of the iteration that produced its first output token
  double completion_s = 0;       // end of the iteration that produced its last output token
  std::int64_t prompt_tokens = 0;
  std::int64_t output_tokens = 0;  // generated; a rejected request: the output it asked for
  // Output tokens asked for but not generated because generation stopped at the maximum
  // sequence length (max_len_policy "cut"); 0 when the request was not cut, and when rejected.
  std::int64_t cut_output_tokens = 0;
  std::int32_t preemptions = 0;
  // Prompt tokens found in the prefix cache at its first admission.
  std::int64_t cached_tokens = 0;
  std::int64_t host_cached_tokens = 0;  // of those, loaded from a host tier
  bool rejected = false;
  std::string reject_reason;  // empty unless rejected

  std::int64_t requested_output_tokens() const { return output_tokens + cut_output_tokens; }
};

// Where a replica's KV slots are, in tokens; the six categories partition its capacity
// (docs/metrics.md defines each).
struct KvMemoryTokens {
  std::int64_t token_states = 0;
  std::int64_t reserved = 0;
  std::int64_t internal_fragmentation = 0;
  std::int64_t external_fragmentation = 0;
  std::int64_t free = 0;
  std::int64_t cached = 0;  // free, holding reusable KV (prefix caching)
};

// One iteration of one replica.
struct IterationRecord {
  std::int32_t replica = 0;
  double start_s = 0;
  double duration_s = 0;
  std::int32_t batch_size = 0;  // running requests that computed tokens in the iteration
  std::int64_t prefill_tokens = 0;
  std::int64_t decode_tokens = 0;
  std::int32_t preempted = 0;       // requests preempted while planning it
  std::int64_t cached_tokens = 0;   // tokens its admissions found in the prefix cache
  std::int64_t kv_used_tokens = 0;  // token slots allocated at the end of the iteration
  std::int64_t kv_capacity_tokens = 0;
  KvMemoryTokens kv_memory;  // at the start of the iteration, after the batch took its memory
  // The sums the cost model priced (sim/hardware/batch_shape.h), so that the iteration can be
  // replayed exactly (validation/ replay).
  std::int64_t prefill_sequences = 0;
  std::int64_t prefill_context_tokens = 0;
  double prefill_attention_pairs = 0;
  double prefill_masked_pairs = 0;
  std::int64_t decode_context_tokens = 0;
  std::int64_t sampled_sequences = 0;
  // Drops the prompt work (chunks, cache hits and their sums), keeping the decodes: the record
  // a decode-only iteration after this one shares with it.
  void clear_prompt_work() noexcept {
    prefill_tokens = 0;
    cached_tokens = 0;
    prefill_sequences = 0;
    prefill_context_tokens = 0;
    prefill_attention_pairs = 0;
    prefill_masked_pairs = 0;
  }
  double kv_utilization() const {
    return kv_capacity_tokens > 0
               ? static_cast<double>(kv_used_tokens) / static_cast<double>(kv_capacity_tokens)
               : 0.0;
  }
};

}  // namespace servesim
