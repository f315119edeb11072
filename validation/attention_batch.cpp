#include "validation/attention_batch.h"

#include <algorithm>
#include <cmath>
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

namespace {

// Sum of squares of split_evenly(total, parts).
double even_squares(std::int64_t total, std::int64_t parts) {
  if (parts <= 0) return 0;
  const auto q = static_cast<double>(total / parts);
  const auto r = static_cast<double>(total % parts);
  return r * (q + 1) * (q + 1) + (static_cast<double>(parts) - r) * q * q;
}

// `parts` chunk lengths (each at least 1) summing to `tokens`: one chunk of L first and the
// rest split evenly, with the largest L whose sum of squares does not exceed `squares`.
std::vector<std::int64_t> chunks_with_squares(std::int64_t tokens, std::int64_t parts,
                                              double squares) {
  if (parts == 1) return {tokens};
  const auto squares_with = [&](std::int64_t first) {
    return static_cast<double>(first) * static_cast<double>(first) +
           even_squares(tokens - first, parts - 1);
  };
  std::int64_t low = (tokens + parts - 1) / parts;  // the even split's longest chunk
  std::int64_t high = tokens - (parts - 1);         // every other chunk one token
  if (high <= low || squares_with(low) > squares) return split_evenly(tokens, parts);
  while (low < high) {  // the largest first length within `squares`
    const std::int64_t mid = low + (high - low + 1) / 2;
    if (squares_with(mid) <= squares + 0.5) {
      low = mid;
    } else {
      high = mid - 1;
    }
  }
  std::vector<std::int64_t> chunks{low};
  const auto rest = split_evenly(tokens - low, parts - 1);
  chunks.insert(chunks.end(), rest.begin(), rest.end());
  return chunks;
}

}  // namespace

ReplaySequences replay_sequences(const BatchShape& shape) {
  ReplaySequences result;
  if (shape.decode_sequences > 0) {
    result.decode_context_tokens =
        split_evenly(shape.decode_context_tokens, shape.decode_sequences);
  }
  const std::int64_t n = shape.prefill_sequences;
  if (n > 0) {
    const std::int64_t tokens = shape.prefill_tokens;
    const std::int64_t cached = shape.prefill_context_tokens - tokens;
    // sum c (c - 1) / 2 = masked, so sum c^2 = 2 masked + tokens.
    auto& chunks = result.prefill_chunk_tokens;
    chunks = chunks_with_squares(tokens, n,
                                 2 * shape.prefill_masked_pairs + static_cast<double>(tokens));
    auto& prefixes = result.prefill_cached_tokens;
    prefixes = split_evenly(cached, n);
    const double rest_mean =
        n > 1 ? static_cast<double>(tokens - chunks[0]) / static_cast<double>(n - 1) : 0.0;
    const auto first = static_cast<double>(chunks[0]);
    if (n > 1 && first > rest_mean) {
      // Pairs = sum c p + sum c (c + 1) / 2, and the second sum is masked + tokens: place
      // `a` cached tokens before the long chunk and spread the rest to match the first sum.
      const double target =
          shape.prefill_attention_pairs - shape.prefill_masked_pairs - static_cast<double>(tokens);
      const double a = (target - rest_mean * static_cast<double>(cached)) / (first - rest_mean);
      const auto on_first =
          static_cast<std::int64_t>(std::clamp(std::round(a), 0.0, static_cast<double>(cached)));
      const auto rest = split_evenly(cached - on_first, n - 1);
      prefixes[0] = on_first;
      std::copy(rest.begin(), rest.end(), prefixes.begin() + 1);
    }
  }
  return result;
}

}  // namespace servesim::validation
