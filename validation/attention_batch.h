#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sim/hardware/batch_shape.h"

namespace servesim::validation {

// One query row of an attention kernel: it attends to the first `keys` tokens of
// `sequence` in the KV cache. Decode has one query per sequence over its whole context;
// a prefill chunk of c tokens after p cached ones has c queries over p + 1, ..., p + c keys
// (the causal mask).
struct AttentionQuery {
  std::int32_t sequence = 0;
  std::int32_t keys = 0;
};

std::vector<AttentionQuery> decode_queries(std::span<const std::int64_t> context_tokens);

// `chunk_tokens[s]` new tokens after `cached_tokens[s]`; the KV cache of sequence s must
// hold cached + chunk tokens (the chunk's own keys are written before attention runs).
std::vector<AttentionQuery> prefill_queries(std::span<const std::int64_t> chunk_tokens,
                                            std::span<const std::int64_t> cached_tokens);

// Splits `total` into `parts` integers that differ by at most one (the larger first) and
// sum to `total`: how replay turns a batch's summed lengths back into sequences.
std::vector<std::int64_t> split_evenly(std::int64_t total, std::int64_t parts);

// The sequences of one replayed iteration, rebuilt from the sums a BatchShape keeps so that
// the replayed batch has the sums the simulator priced. Token and context sums are always
// exact: every decoding sequence gets an equal share of decode_context_tokens (decode
// attention work is linear in it). Prefill chunks are equal when the shape's pair sums say
// they were; otherwise one chunk is made longer than the others, as far as gives the shape's
// prefill_masked_pairs (the sum of c (c - 1) / 2 fixes the sum of squared chunk lengths), and
// the cached tokens are placed so that the query-key pairs approach prefill_attention_pairs
// (exact when the priced batch was one long chunk beside equal ones, the usual mix).
struct ReplaySequences {
  std::vector<std::int64_t> decode_context_tokens;  // per decoding sequence, new token included
  std::vector<std::int64_t> prefill_chunk_tokens;   // per prefill chunk
  std::vector<std::int64_t> prefill_cached_tokens;  // per prefill chunk
};
ReplaySequences replay_sequences(const BatchShape& shape);

}  // namespace servesim::validation
