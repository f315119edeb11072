#include <algorithm>
#include <climits>
#include <string>

#include "sim/memory/impl/block_watermark.h"
#include "sim/memory/impl/hybrid_paged_allocator.h"
#include "sim/memory/impl/kv_group_rules.h"

// The hybrid allocator's prefix caching (vLLM's HybridKVCacheCoordinator): look-ups, hits
// and naming computed blocks. The allocation rules are in hybrid_paged_allocator.cpp.

namespace servesim {

using namespace kv_group_rules;

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
  return watermark_.admits(pool_, needed);
}

PrefixAdmission HybridPagedAllocator::admit_prefix(const PrefixKey& key, std::int64_t tokens,
                                                   std::int64_t final_tokens) {
  if (!caching_ || key.block_hashes.empty()) {
    return {admit(key.sequence, tokens, final_tokens), 0};
  }
  if (tokens < 0 || !can_admit_prefix(key, tokens, final_tokens)) {
    throw_admitted_without_room(kName, key.sequence);
  }
  const std::int64_t hits = hit_blocks(key, tokens / slot_tokens_);
  Table* t = &tables_.emplace_new(key.sequence, kName);
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

}  // namespace servesim
