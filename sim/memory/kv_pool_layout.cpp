#include "sim/memory/kv_pool_layout.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "sim/core/error.h"

namespace servesim {
namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

bool is_attention(KvGroupKind kind) {
  return kind != KvGroupKind::RecurrentState;
}

// The bytes one layer of the group keeps per token (attention) or per sequence (recurrent).
double per_layer_bytes(const KvGroup& g) {
  const double layers = static_cast<double>(std::max<std::int64_t>(g.layers, 1));
  return (is_attention(g.kind) ? g.bytes_per_token : g.state_bytes_per_sequence) / layers;
}

}  // namespace

bool KvPoolLayout::per_group() const noexcept {
  if (groups.size() != 1) return true;
  const KvGroupKind kind = groups.front().kind;
  return kind != KvGroupKind::FullAttention && kind != KvGroupKind::MlaLatent;
}

std::int64_t KvPoolLayout::blocks_in(double kv_bytes) const noexcept {
  if (!(kv_bytes > 0) || !(block_bytes() > 0)) return 0;
  return static_cast<std::int64_t>(
      std::floor(kv_bytes / page_bytes / static_cast<double>(layers_per_group)));
}

std::int64_t KvPoolLayout::reported_tokens(std::int64_t blocks) const noexcept {
  if (groups.empty()) return 0;
  return blocks / static_cast<std::int64_t>(groups.size()) * block_tokens;
}

std::int64_t KvPoolLayout::blocks_for_reported_tokens(std::int64_t tokens) const noexcept {
  if (block_tokens <= 0) return 0;
  return tokens / block_tokens * static_cast<std::int64_t>(groups.size());
}

std::int64_t KvPoolLayout::max_blocks_per_sequence(std::int64_t tokens,
                                                   std::int64_t step_tokens) const {
  std::int64_t blocks = 0;
  for (const KvPoolGroup& g : groups) {
    switch (g.kind) {
      case KvGroupKind::FullAttention:
      case KvGroupKind::MlaLatent:
        blocks += ceil_div(tokens, g.block_tokens);
        break;
      case KvGroupKind::SlidingWindow:
        blocks += ceil_div(std::min(g.window_tokens - 1 + step_tokens, tokens), g.block_tokens) + 1;
        break;
      case KvGroupKind::ChunkedLocal:
        blocks += ceil_div(std::min(g.window_tokens + step_tokens, tokens), g.block_tokens);
        break;
      case KvGroupKind::RecurrentState:
        blocks += 1;
        break;
    }
  }
  return blocks;
}

KvPoolLayout kv_pool_layout(const std::vector<KvGroup>& groups_per_gpu, std::int64_t block_tokens) {
  if (block_tokens < 1) {
    throw InputError("allocator.block_size",
                     "expected a positive number of tokens, got " + std::to_string(block_tokens));
  }
  KvPoolLayout layout;
  std::vector<const KvGroup*> kinds;
  for (const KvGroup& g : groups_per_gpu) {
    if (g.layers > 0) kinds.push_back(&g);
  }
  if (kinds.empty()) return layout;

  // The page: the widest attention layer at the block size, grown to hold a recurrent state.
  double attention_token_bytes = 0;  // the widest attention layer's bytes per token
  double state_bytes = 0;            // the largest recurrent layer's state
  for (const KvGroup* g : kinds) {
    if (is_attention(g->kind)) {
      attention_token_bytes = std::max(attention_token_bytes, per_layer_bytes(*g));
    } else {
      state_bytes = std::max(state_bytes, per_layer_bytes(*g));
    }
  }
  std::int64_t attention_block = block_tokens;
  if (attention_token_bytes > 0 && state_bytes > 0) {
    // vLLM's kernel alignment: FlashAttention's multiple of 16, or the block size if larger.
    const std::int64_t align = std::max<std::int64_t>(16, block_tokens);
    attention_block =
        align * static_cast<std::int64_t>(
                    std::ceil(state_bytes / (static_cast<double>(align) * attention_token_bytes)));
  }
  layout.page_bytes = attention_token_bytes > 0
                          ? static_cast<double>(attention_block) * attention_token_bytes
                          : state_bytes;
  layout.block_tokens = attention_block;

  // The group size: the fewest layers of a kind, or the most when they are close.
  std::int64_t fewest = kinds.front()->layers;
  std::int64_t most = fewest;
  for (const KvGroup* g : kinds) {
    fewest = std::min(fewest, g->layers);
    most = std::max(most, g->layers);
  }
  layout.layers_per_group =
      static_cast<double>(most) < 1.5 * static_cast<double>(fewest) ? most : fewest;

  for (const KvGroup* g : kinds) {
    KvPoolGroup pool;
    pool.kind = g->kind;
    pool.window_tokens = g->window_tokens;
    if (is_attention(g->kind)) {
      // A narrower layer holds more tokens in the same page.
      pool.block_tokens = std::max<std::int64_t>(
          1, static_cast<std::int64_t>(
                 std::llround(layout.page_bytes / std::max(per_layer_bytes(*g), 1e-300))));
    }
    const std::int64_t count = ceil_div(g->layers, layout.layers_per_group);
    // Layer i of the kind goes to group i mod count (vLLM's layers[i::count]).
    for (std::int64_t i = 0; i < count; ++i) {
      pool.layers = ceil_div(g->layers - i, count);
      layout.groups.push_back(pool);
    }
  }
  return layout;
}

}  // namespace servesim
