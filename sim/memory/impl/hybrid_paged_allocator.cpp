#include "sim/memory/impl/hybrid_paged_allocator.h"

#include <algorithm>
#include <climits>
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

// Whether vLLM's prefix caching applies: full, MLA, sliding-window and chunked-local groups of
// one block size (vLLM asserts the one size for chunked-local groups), not recurrent states.
bool cacheable(const KvPoolLayout& layout) {
  return std::all_of(layout.groups.begin(), layout.groups.end(), [&](const KvPoolGroup& g) {
    return g.kind != KvGroupKind::RecurrentState && g.block_tokens == layout.block_tokens;
  });
}

bool is_window(const KvPoolGroup& g) {
  return g.kind == KvGroupKind::SlidingWindow;
}

bool is_chunked(const KvPoolGroup& g) {
  return g.kind == KvGroupKind::ChunkedLocal && g.window_tokens > 0;
}

// The first block of a chunked-local group a hit of `hits` blocks needs: that of the chunk the
// next token (index hits x block) falls in; the earlier ones are vLLM's null blocks.
std::int64_t chunk_start_block(const KvPoolGroup& g, std::int64_t hits) {
  return hits * g.block_tokens / g.window_tokens * g.window_tokens / g.block_tokens;
}

// The blocks before a hit point a window group must find: ceil((W - 1) / block).
std::int64_t window_blocks(const KvPoolGroup& g) {
  return g.window_tokens > 1 ? ceil_div(g.window_tokens - 1, g.block_tokens) : 0;
}

}  // namespace

HybridPagedAllocator::HybridPagedAllocator(const KvPoolLayout& layout, std::int64_t total_blocks,
                                           double watermark_fraction, bool prefix_caching)
    : layout_(layout),
      caching_(prefix_caching && cacheable(layout)),
      slot_tokens_(layout.block_tokens),
      watermark_blocks_(0),
      uniform_blocks_(std::all_of(layout.groups.begin(), layout.groups.end(),
                                  [&](const KvPoolGroup& g) {
                                    return g.kind == KvGroupKind::RecurrentState ||
                                           g.block_tokens == layout.block_tokens;
                                  })),
      pool_(checked_blocks(layout, total_blocks), caching_),
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
  return tables_.at(sequence, "hybrid paged allocator");
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
  Table* t = &tables_.emplace_new(sequence, "hybrid paged allocator");
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

std::uint64_t HybridPagedAllocator::identity(std::int64_t sequence,
                                             std::span<const std::uint64_t> hashes,
                                             std::int64_t index, std::size_t group) {
  // The content's identity, or past the content one private to the sequence and the block's
  // place; then mixed with the group (splitmix64's finaliser), as vLLM keys a cached block by
  // its hash and group.
  std::uint64_t z = index < static_cast<std::int64_t>(hashes.size())
                        ? hashes[static_cast<std::size_t>(index)]
                        : (0x70726976617465ull ^ (static_cast<std::uint64_t>(sequence) << 20) ^
                           static_cast<std::uint64_t>(index)) *
                              0xD6E8FEB86659FD93ull;
  z += (static_cast<std::uint64_t>(group) + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

std::int64_t HybridPagedAllocator::hit_blocks(const PrefixKey& key, std::int64_t max_blocks) const {
  if (!caching_ || key.block_hashes.empty()) return 0;
  const auto cached = [&](std::int64_t index, std::size_t group) {
    return pool_.find(identity(key.sequence, key.block_hashes, index, group)) >= 0;
  };
  // vLLM: a hit covers at most tokens - 1, so that the last token is computed and sampled.
  std::int64_t hits = std::min(max_blocks, (key.tokens - 1) / slot_tokens_);
  // The leading blocks every full group holds.
  for (std::size_t g = 0; g < layout_.groups.size(); ++g) {
    if (is_window(layout_.groups[g]) || is_chunked(layout_.groups[g])) continue;
    std::int64_t k = 0;
    while (k < hits && cached(k, g))
      ++k;
    hits = k;
  }
  // Within them, the longest prefix whose window blocks every window group holds (searched
  // from the right, as vLLM's SlidingWindowManager) and whose current chunk's blocks every
  // chunked-local group holds from the chunk's start on (ChunkedLocalAttentionManager), until
  // no group shortens it.
  for (std::int64_t before = -1; before != hits;) {
    before = hits;
    for (std::size_t g = 0; g < layout_.groups.size(); ++g) {
      const KvPoolGroup& group = layout_.groups[g];
      if (is_chunked(group)) {
        std::int64_t k = chunk_start_block(group, hits);
        while (k < hits && cached(k, g))
          ++k;
        hits = k;
        continue;
      }
      const std::int64_t needed = window_blocks(group);
      if (!is_window(group) || needed <= 0) continue;
      std::int64_t run = 0;
      std::int64_t found = -1;
      for (std::int64_t i = hits - 1; i >= 0; --i) {
        if (!cached(i, g)) {
          run = 0;
          continue;
        }
        if (++run >= needed) {
          found = i + run;
          break;
        }
      }
      hits = found >= 0 ? found : run;  // no full window: the leading run from block 0
    }
  }
  return hits;
}

std::int64_t HybridPagedAllocator::first_shared(std::size_t group, std::int64_t hits) const {
  const KvPoolGroup& g = layout_.groups[group];
  if (is_chunked(g)) return chunk_start_block(g, hits);
  return is_window(g) ? std::max<std::int64_t>(0, hits - window_blocks(g)) : 0;
}

std::int64_t HybridPagedAllocator::cached_prefix_tokens(const PrefixKey& key) const {
  return hit_blocks(key, INT64_MAX) * slot_tokens_;
}

bool HybridPagedAllocator::can_admit_prefix(const PrefixKey& key, std::int64_t tokens,
                                            std::int64_t final_tokens) const {
  if (!caching_ || key.block_hashes.empty()) return can_admit(tokens, final_tokens);
  const std::int64_t hits = hit_blocks(key, tokens / slot_tokens_);
  // Hit blocks are held, not allocated; but a free one leaves the free blocks (vLLM's
  // evictable computed blocks).
  std::int64_t needed = 0;
  for (std::size_t g = 0; g < layout_.groups.size(); ++g) {
    needed += span_of(layout_.groups[g], tokens) - hits;
    for (std::int64_t k = first_shared(g, hits); k < hits; ++k) {
      const std::int32_t block = pool_.find(identity(key.sequence, key.block_hashes, k, g));
      needed += pool_.is_free(block) ? 1 : 0;
    }
  }
  if (pool_.used() == 0) return needed <= pool_.free();
  return pool_.free() - needed >= watermark_blocks_;
}

PrefixAdmission HybridPagedAllocator::admit_prefix(const PrefixKey& key, std::int64_t tokens,
                                                   std::int64_t final_tokens) {
  if (!caching_ || key.block_hashes.empty()) {
    return {admit(key.sequence, tokens, final_tokens), 0};
  }
  if (tokens < 0 || !can_admit_prefix(key, tokens, final_tokens)) {
    throw InvariantError("kv_within_capacity", "hybrid paged allocator: admitted sequence " +
                                                   std::to_string(key.sequence) + " without room");
  }
  const std::int64_t hits = hit_blocks(key, tokens / slot_tokens_);
  Table* t = &tables_.emplace_new(key.sequence, "hybrid paged allocator");
  t->groups.resize(layout_.groups.size());
  for (std::size_t g = 0; g < layout_.groups.size(); ++g) {
    GroupTable& gt = t->groups[g];
    gt.blocks.clear();
    gt.skipped = first_shared(g, hits);
    for (std::int64_t k = gt.skipped; k < hits; ++k) {
      const std::int32_t block = pool_.find(identity(key.sequence, key.block_hashes, k, g));
      pool_.share(block);
      gt.blocks.push_back(block);
      ++group_blocks_[g];
    }
  }
  t->hashes = key.block_hashes;
  t->committed_blocks = hits;
  t->tokens = hits * slot_tokens_;
  take(*t, tokens - t->tokens);
  token_states_ += states_of(*t);
  settle_quiet(*t);
  return {hits * slot_tokens_, 0};
}

void HybridPagedAllocator::commit_computed(std::int64_t sequence, std::int64_t computed_tokens) {
  if (!caching_) return;
  Table& t = table(sequence);
  if (t.hashes.empty()) return;
  const std::int64_t full = computed_tokens / slot_tokens_;
  for (std::size_t g = 0; g < t.groups.size(); ++g) {
    GroupTable& gt = t.groups[g];
    const std::int64_t spanned = gt.skipped + static_cast<std::int64_t>(gt.blocks.size());
    // Blocks a window already freed were lost to the cache unnamed.
    for (std::int64_t k = std::max(t.committed_blocks, gt.skipped); k < std::min(full, spanned);
         ++k) {
      pool_.name(gt.blocks[static_cast<std::size_t>(k - gt.skipped)],
                 identity(sequence, t.hashes, k, g));
    }
  }
  t.committed_blocks = std::max(t.committed_blocks, full);
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
