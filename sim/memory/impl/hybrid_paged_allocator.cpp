#include "sim/memory/impl/hybrid_paged_allocator.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "sim/core/error.h"

namespace servesim {
namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

// The pool's blocks, checked: at least one per group.
std::int64_t checked_blocks(const KvPoolLayout& layout, std::int64_t total_blocks) {
  const auto groups = static_cast<std::int64_t>(layout.groups.size());
  if (groups == 0 || layout.block_tokens <= 0) {
    throw InvariantError("hybrid paged allocator: a layout without groups");
  }
  if (total_blocks < groups) {
    throw InfeasibleError("the KV cache holds " + std::to_string(total_blocks) +
                          " blocks, fewer than its " + std::to_string(groups) +
                          " layer groups need (one each)");
  }
  return total_blocks;
}

}  // namespace

HybridPagedAllocator::HybridPagedAllocator(const KvPoolLayout& layout, std::int64_t total_blocks,
                                           double watermark_fraction)
    : layout_(layout),
      slot_tokens_(layout.block_tokens),
      watermark_blocks_(0),
      pool_(checked_blocks(layout, total_blocks)),
      group_blocks_(layout.groups.size(), 0) {
  watermark_blocks_ = static_cast<std::int64_t>(
      std::floor(watermark_fraction * static_cast<double>(pool_.total())));
}

std::int64_t HybridPagedAllocator::span_of(const KvPoolGroup& g, std::int64_t tokens) {
  if (tokens <= 0) return 0;
  if (g.kind == KvGroupKind::RecurrentState) return 1;
  return ceil_div(tokens, g.block_tokens);
}

std::int64_t HybridPagedAllocator::first_needed(const KvPoolGroup& g, std::int64_t computed) {
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

HybridPagedAllocator::Change HybridPagedAllocator::change_of(const Table& t,
                                                             std::int64_t tokens) const {
  Change c;
  for (std::size_t i = 0; i < layout_.groups.size(); ++i) {
    const KvPoolGroup& g = layout_.groups[i];
    const GroupTable& gt = t.groups[i];
    const std::int64_t spanned = gt.skipped + static_cast<std::int64_t>(gt.blocks.size());
    c.freed += std::max<std::int64_t>(0, first_needed(g, t.tokens) - gt.skipped);
    c.taken += std::max<std::int64_t>(0, span_of(g, t.tokens + tokens) - spanned);
  }
  return c;
}

std::int64_t HybridPagedAllocator::states_of(const Table& t) const {
  std::int64_t states = 0;
  for (std::size_t i = 0; i < layout_.groups.size(); ++i) {
    const KvPoolGroup& g = layout_.groups[i];
    const GroupTable& gt = t.groups[i];
    if (gt.blocks.empty()) continue;
    if (g.kind == KvGroupKind::RecurrentState) {
      states += slot_tokens_;
    } else {
      const std::int64_t held = t.tokens - gt.skipped * g.block_tokens;
      states += held * slot_tokens_ / g.block_tokens;
    }
  }
  return states;
}

void HybridPagedAllocator::free_skipped(Table& t) {
  for (std::size_t i = 0; i < layout_.groups.size(); ++i) {
    GroupTable& gt = t.groups[i];
    const std::int64_t freed = first_needed(layout_.groups[i], t.tokens) - gt.skipped;
    if (freed <= 0) continue;
    const auto n = static_cast<std::ptrdiff_t>(freed);
    pool_.give_back(std::span<const std::int32_t>(gt.blocks.data(), gt.blocks.size())
                        .first(static_cast<std::size_t>(n)));
    gt.blocks.erase(gt.blocks.begin(), gt.blocks.begin() + n);
    gt.skipped += freed;
    group_blocks_[i] -= freed;
  }
}

void HybridPagedAllocator::take(Table& t, std::int64_t tokens) {
  const std::int64_t after = t.tokens + tokens;
  for (std::size_t i = 0; i < layout_.groups.size(); ++i) {
    GroupTable& gt = t.groups[i];
    const std::int64_t spanned = gt.skipped + static_cast<std::int64_t>(gt.blocks.size());
    const std::int64_t more = span_of(layout_.groups[i], after) - spanned;
    if (more <= 0) continue;
    pool_.take(more, gt.blocks);
    group_blocks_[i] += more;
  }
  t.tokens = after;
}

const HybridPagedAllocator::Table& HybridPagedAllocator::table(std::int64_t sequence) const {
  const Table* t = tables_.find(sequence);
  if (t == nullptr) {
    throw InvariantError("hybrid paged allocator: sequence " + std::to_string(sequence) +
                         " holds no blocks");
  }
  return *t;
}

const std::vector<std::int32_t>& HybridPagedAllocator::block_table(std::int64_t sequence,
                                                                   std::size_t group) const {
  return table(sequence).groups.at(group).blocks;
}

bool HybridPagedAllocator::fits_when_empty(std::int64_t final_tokens) const {
  // The most a sequence can hold at once: every block of its length (a prompt computed in
  // one step holds its whole length in the windowed groups too).
  std::int64_t blocks = 0;
  for (const KvPoolGroup& g : layout_.groups)
    blocks += span_of(g, final_tokens);
  return blocks <= pool_.total();
}

bool HybridPagedAllocator::can_admit(std::int64_t tokens, std::int64_t /*final_tokens*/) const {
  std::int64_t needed = 0;
  for (const KvPoolGroup& g : layout_.groups)
    needed += span_of(g, tokens);
  // The watermark must not shut out a sequence that fits an otherwise empty cache.
  if (pool_.used() == 0) return needed <= pool_.free();
  return pool_.free() - needed >= watermark_blocks_;
}

std::int64_t HybridPagedAllocator::admit(std::int64_t sequence, std::int64_t tokens,
                                         std::int64_t final_tokens) {
  if (tokens < 0 || !can_admit(tokens, final_tokens)) {
    throw InvariantError("kv_within_capacity", "hybrid paged allocator: admitted sequence " +
                                                   std::to_string(sequence) + " without room");
  }
  Table* t = tables_.emplace(sequence);
  if (t == nullptr) {
    throw InvariantError("hybrid paged allocator: sequence " + std::to_string(sequence) +
                         " admitted twice");
  }
  t->tokens = 0;
  t->groups.resize(layout_.groups.size());
  for (GroupTable& gt : t->groups) {
    gt.blocks.clear();  // a pooled table keeps its capacity
    gt.skipped = 0;
  }
  take(*t, tokens);
  token_states_ += states_of(*t);
  return 0;
}

bool HybridPagedAllocator::can_grow(std::int64_t sequence, std::int64_t tokens) const {
  return tokens >= 0 && fits(table(sequence), tokens);
}

void HybridPagedAllocator::grow(std::int64_t sequence, std::int64_t tokens) {
  if (!try_grow(sequence, tokens)) {
    throw InvariantError("kv_within_capacity",
                         "hybrid paged allocator: no free block to grow sequence " +
                             std::to_string(sequence) + " by " + std::to_string(tokens) +
                             " tokens");
  }
}

bool HybridPagedAllocator::try_grow(std::int64_t sequence, std::int64_t tokens) {
  Table& t = table(sequence);
  if (tokens < 0) return false;
  token_states_ -= states_of(t);
  // As vLLM: what lies outside the windows is freed whether or not the new blocks fit.
  free_skipped(t);
  const bool fit = fits(t, tokens);
  if (fit) take(t, tokens);
  token_states_ += states_of(t);
  return fit;
}

void HybridPagedAllocator::release(std::int64_t sequence) {
  Table& t = table(sequence);
  token_states_ -= states_of(t);
  for (std::size_t i = 0; i < t.groups.size(); ++i) {
    pool_.give_back(t.groups[i].blocks);
    group_blocks_[i] -= static_cast<std::int64_t>(t.groups[i].blocks.size());
  }
  tables_.erase(sequence);
  check_conservation();
}

void HybridPagedAllocator::check_conservation() const {
  std::int64_t held = 0;
  for (const std::int64_t blocks : group_blocks_)
    held += blocks;
  if (pool_.conserved() && held == pool_.used() && token_states_ >= 0 &&
      token_states_ <= pool_.used() * slot_tokens_) {
    [[likely]] return;
  }
  throw InvariantError("blocks_conserved",
                       "hybrid paged allocator: " + std::to_string(pool_.used()) + " used + " +
                           std::to_string(pool_.free()) + " free blocks of " +
                           std::to_string(pool_.total()) + ", " + std::to_string(held) +
                           " held by the groups' tables, or tokens outside them");
}

// Any free block serves any group, so the pool has no external fragmentation.
KvUsage HybridPagedAllocator::usage(std::int64_t /*next_final_tokens*/) const {
  check_conservation();
  KvUsage u;
  u.capacity_tokens = capacity_tokens();
  u.token_states = token_states_;
  u.internal_fragmentation = pool_.used() * slot_tokens_ - token_states_;
  u.free = pool_.free() * slot_tokens_;
  return u;
}

}  // namespace servesim
