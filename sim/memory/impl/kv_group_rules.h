#pragma once

#include <algorithm>
#include <cstdint>

#include "sim/memory/kv_pool_layout.h"

namespace servesim::kv_group_rules {

// The rules by which a layer group of a hybrid layout holds blocks (vLLM's
// single_type_kv_cache_manager.py, one manager per kind), as functions of the tokens held.

inline std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

// Blocks (live and skipped) a group's table spans for `tokens` tokens.
inline std::int64_t span_of(const KvPoolGroup& g, std::int64_t tokens) {
  if (tokens <= 0) return 0;
  if (g.kind == KvGroupKind::RecurrentState) return 1;
  return ceil_div(tokens, g.block_tokens);
}

// The first block a group still needs once `computed` tokens are computed.
inline std::int64_t first_needed(const KvPoolGroup& g, std::int64_t computed) {
  if (g.window_tokens <= 0) return 0;  // no window: every token is kept
  switch (g.kind) {
    case KvGroupKind::SlidingWindow:
      // The next token attends to tokens [computed - W + 1, computed].
      return std::max<std::int64_t>(0, computed - g.window_tokens + 1) / g.block_tokens;
    case KvGroupKind::ChunkedLocal:
      // The next token attends to its own chunk only.
      return computed / g.window_tokens * g.window_tokens / g.block_tokens;
    case KvGroupKind::FullAttention:
    case KvGroupKind::MlaLatent:
    case KvGroupKind::RecurrentState:
      break;
  }
  return 0;
}

inline bool is_window(const KvPoolGroup& g) {
  return g.kind == KvGroupKind::SlidingWindow;
}

inline bool is_chunked(const KvPoolGroup& g) {
  return g.kind == KvGroupKind::ChunkedLocal && g.window_tokens > 0;
}

// The first block of a chunked-local group a hit of `hits` blocks needs: that of the chunk the
// next token (index hits x block) falls in; the earlier ones are vLLM's null blocks.
inline std::int64_t chunk_start_block(const KvPoolGroup& g, std::int64_t hits) {
  return hits * g.block_tokens / g.window_tokens * g.window_tokens / g.block_tokens;
}

// The blocks before a hit point a window group must find: ceil((W - 1) / block).
inline std::int64_t window_blocks(const KvPoolGroup& g) {
  return g.window_tokens > 1 ? ceil_div(g.window_tokens - 1, g.block_tokens) : 0;
}

// Whether vLLM's prefix caching applies: full, MLA, sliding-window and chunked-local groups of
// one block size (vLLM asserts the one size for chunked-local groups), not recurrent states.
inline bool cacheable(const KvPoolLayout& layout) {
  return std::all_of(layout.groups.begin(), layout.groups.end(), [&](const KvPoolGroup& g) {
    return g.kind != KvGroupKind::RecurrentState && g.block_tokens == layout.block_tokens;
  });
}

}  // namespace servesim::kv_group_rules
