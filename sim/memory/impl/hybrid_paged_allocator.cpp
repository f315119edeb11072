#include "sim/memory/impl/hybrid_paged_allocator.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <string>

#include "sim/core/error.h"
#include "sim/memory/impl/block_watermark.h"
#include "sim/memory/impl/kv_group_rules.h"

namespace servesim {

using namespace kv_group_rules;

namespace {

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
                                           double watermark_fraction, bool prefix_caching)
    : layout_(layout),
      caching_(prefix_caching && cacheable(layout)),
      slot_tokens_(layout.block_tokens),
      uniform_blocks_(std::all_of(layout.groups.begin(), layout.groups.end(),
                                  [&](const KvPoolGroup& g) {
                                    return g.kind == KvGroupKind::RecurrentState ||
                                           g.block_tokens == layout.block_tokens;
                                  })),
      pool_(checked_blocks(layout, total_blocks), caching_),
      watermark_(watermark_fraction, pool_.total()),
      group_blocks_(layout.groups.size(), 0) {}

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

void HybridPagedAllocator::settle_quiet(Table& t) const {
  t.quiet_grows = 0;
  t.states_per_token = 0;
  if (!uniform_blocks_ || t.tokens <= 0) return;
  std::int64_t quiet = INT64_MAX;
  for (std::size_t i = 0; i < layout_.groups.size(); ++i) {
    const KvPoolGroup& g = layout_.groups[i];
    const GroupTable& gt = t.groups[i];
    if (g.kind == KvGroupKind::RecurrentState) continue;  // one block, taken at admission
    if (!gt.blocks.empty()) ++t.states_per_token;
    // A grow that starts at a multiple of the block takes one.
    const std::int64_t into_block = t.tokens % g.block_tokens;
    quiet = std::min(quiet, into_block == 0 ? 0 : g.block_tokens - into_block);
    // The first token count at which the group frees a block it holds now.
    std::int64_t frees_at = INT64_MAX;
    if (g.kind == KvGroupKind::SlidingWindow && g.window_tokens > 0) {
      frees_at = (gt.skipped + 1) * g.block_tokens + g.window_tokens - 1;
    } else if (g.kind == KvGroupKind::ChunkedLocal && g.window_tokens > 0) {
      // Chunks of whole blocks (Llama 4's 8,192 tokens); any other size takes the general path.
      frees_at = g.window_tokens % g.block_tokens != 0
                     ? t.tokens
                     : (gt.skipped * g.block_tokens / g.window_tokens + 1) * g.window_tokens;
    }
    if (frees_at != INT64_MAX)
      quiet = std::min(quiet, std::max<std::int64_t>(0, frees_at - t.tokens));
  }
  t.quiet_grows = quiet == INT64_MAX ? 0 : quiet;
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
  return tables_.at(sequence, kName);
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
  return watermark_.admits(pool_, needed);
}

std::int64_t HybridPagedAllocator::admit(std::int64_t sequence, std::int64_t tokens,
                                         std::int64_t final_tokens) {
  if (tokens < 0 || !can_admit(tokens, final_tokens)) {
    throw_admitted_without_room(kName, sequence);
  }
  Table* t = &tables_.emplace_new(sequence, kName);
  t->tokens = 0;
  t->groups.resize(layout_.groups.size());
  for (GroupTable& gt : t->groups) {
    gt.blocks.clear();  // a pooled table keeps its capacity
    gt.skipped = 0;
  }
  t->hashes = {};
  t->committed_blocks = 0;
  take(*t, tokens);
  token_states_ += states_of(*t);
  settle_quiet(*t);
  return 0;
}

bool HybridPagedAllocator::can_grow(std::int64_t sequence, std::int64_t tokens) const {
  return tokens >= 0 && fits(table(sequence), tokens);
}

void HybridPagedAllocator::grow(std::int64_t sequence, std::int64_t tokens) {
  if (!try_grow(sequence, tokens)) {
    throw_no_block_to_grow(kName, sequence, tokens);
  }
}

bool HybridPagedAllocator::try_grow(std::int64_t sequence, std::int64_t tokens) {
  Table& t = table(sequence);
  if (tokens < 0) return false;
  if (tokens == 1 && t.quiet_grows > 0) {
    // Neither frees nor takes a block: what the general path below would do, in O(1).
    --t.quiet_grows;
    ++t.tokens;
    token_states_ += t.states_per_token;
    return true;
  }
  token_states_ -= states_of(t);
  // As vLLM: what lies outside the windows is freed whether or not the new blocks fit.
  free_skipped(t);
  const bool fit = fits(t, tokens);
  if (fit) take(t, tokens);
  token_states_ += states_of(t);
  settle_quiet(t);
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
  // The tables' holdings count a shared block once per holder.
  std::int64_t held = 0;
  for (const std::int64_t blocks : group_blocks_)
    held += blocks;
  const std::int64_t states = physical_states();
  if (pool_.conserved() && held == pool_.used() + pool_.extra_holders() && states >= 0 &&
      states <= pool_.used() * slot_tokens_) {
    [[likely]] return;
  }
  throw InvariantError("blocks_conserved",
                       "hybrid paged allocator: " + std::to_string(pool_.used()) + " used + " +
                           std::to_string(pool_.free()) + " free blocks of " +
                           std::to_string(pool_.total()) + ", " + std::to_string(held) +
                           " held by the groups' tables, or tokens outside them");
}

KvUsage HybridPagedAllocator::usage(std::int64_t /*next_final_tokens*/) const {
  check_conservation();
  return pool_.usage(slot_tokens_, physical_states());
}

}  // namespace servesim
