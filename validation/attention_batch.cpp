#include "validation/attention_batch.h"

#include <limits>
#include <stdexcept>

namespace servesim::validation {
namespace {

std::int32_t to_int32(std::int64_t value) {
  if (value < 0 || value > std::numeric_limits<std::int32_t>::max()) {
    throw std::invalid_argument("attention batch: length out of range");
  }
  return static_cast<std::int32_t>(value);
}

}  // namespace

std::vector<AttentionQuery> decode_queries(std::span<const std::int64_t> context_tokens) {
  std::vector<AttentionQuery> queries;
  for (std::size_t s = 0; s < context_tokens.size(); ++s) {
    queries.push_back({to_int32(static_cast<std::int64_t>(s)), to_int32(context_tokens[s])});
  }
  return queries;
}

std::vector<AttentionQuery> prefill_queries(std::span<const std::int64_t> chunk_tokens,
                                            std::span<const std::int64_t> cached_tokens) {
  if (chunk_tokens.size() != cached_tokens.size()) {
    throw std::invalid_argument("prefill_queries: one cached length per chunk expected");
  }
  std::vector<AttentionQuery> queries;
  for (std::size_t s = 0; s < chunk_tokens.size(); ++s) {
    for (std::int64_t i = 0; i < chunk_tokens[s]; ++i) {
      queries.push_back(
          {to_int32(static_cast<std::int64_t>(s)), to_int32(cached_tokens[s] + i + 1)});
    }
  }
  return queries;
}

std::vector<std::int64_t> split_evenly(std::int64_t total, std::int64_t parts) {
  if (parts <= 0 || total < 0) throw std::invalid_argument("split_evenly: bad arguments");
  std::vector<std::int64_t> result(static_cast<std::size_t>(parts), total / parts);
  for (std::int64_t i = 0; i < total % parts; ++i)
    ++result[static_cast<std::size_t>(i)];
  return result;
}

ReplaySequences replay_sequences(const BatchShape& shape) {
  ReplaySequences result;
  if (shape.decode_sequences > 0) {
    result.decode_context_tokens =
        split_evenly(shape.decode_context_tokens, shape.decode_sequences);
  }
  if (shape.prefill_sequences > 0) {
    result.prefill_chunk_tokens = split_evenly(shape.prefill_tokens, shape.prefill_sequences);
    result.prefill_cached_tokens =
        split_evenly(shape.prefill_context_tokens - shape.prefill_tokens, shape.prefill_sequences);
  }
  return result;
}

}  // namespace servesim::validation
