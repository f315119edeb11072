#include "sim/memory/impl/paged_allocator.h"

#include <algorithm>
#include <climits>

#include "sim/memory/impl/block_watermark.h"

// The paged allocator's prefix caching (vLLM V1's automatic prefix caching): block
// identities, look-ups on the GPU and in the host tier, hits at admission and naming
// computed blocks. Allocation and the decode fast path are in paged_allocator.cpp.

namespace servesim {

std::uint64_t PagedAllocator::identity(std::int64_t sequence, std::span<const std::uint64_t> hashes,
                                       std::int64_t index) {
  if (index < static_cast<std::int64_t>(hashes.size())) {
    return hashes[static_cast<std::size_t>(index)];
  }
  // splitmix64's finaliser over (a namespace of private blocks, sequence, index): never a
  // content identity but by a 64-bit collision.
  std::uint64_t z = 0x70726976617465ull ^ (static_cast<std::uint64_t>(sequence) << 20) ^
                    static_cast<std::uint64_t>(index);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return (z * 0x9E3779B97F4A7C15ull) ^ static_cast<std::uint64_t>(sequence);
}

template <class Hit>
std::int64_t PagedAllocator::for_each_hit(const PrefixKey& key, std::int64_t max_blocks,
                                          Hit hit) const {
  if (!pool_.prefix_caching() || key.block_hashes.empty()) return 0;
  // vLLM: a hit covers at most tokens - 1, so that the last token is computed and sampled.
  const std::int64_t cap = hit_cap(key, max_blocks);
  std::int64_t hits = 0;
  for (; hits < cap; ++hits) {
    const std::int32_t block = pool_.find(identity(key.sequence, key.block_hashes, hits));
    if (block < 0) break;
    hit(block);
  }
  return hits;
}

std::int64_t PagedAllocator::host_hits(const PrefixKey& key, std::int64_t gpu_hits,
                                       std::int64_t max_blocks) const {
  const HostBlockCache* host = pool_.host();
  if (host == nullptr || key.block_hashes.empty()) return 0;
  const std::int64_t cap = hit_cap(key, max_blocks);
  std::int64_t k = gpu_hits;
  while (k < cap && host->contains(identity(key.sequence, key.block_hashes, k)))
    ++k;
  return k - gpu_hits;
}

std::int64_t PagedAllocator::cached_prefix_tokens(const PrefixKey& key) const {
  const std::int64_t gpu = for_each_hit(key, INT64_MAX, [](std::int32_t) {});
  return (gpu + host_hits(key, gpu, INT64_MAX)) * block_size_;
}

bool PagedAllocator::can_admit_prefix(const PrefixKey& key, std::int64_t tokens,
                                      std::int64_t final_tokens) const {
  if (!pool_.prefix_caching() || key.block_hashes.empty()) return can_admit(tokens, final_tokens);
  // Hit blocks are held, not allocated; but a free one leaves the free blocks (vLLM's
  // evictable computed blocks). Blocks loaded from the host tier take fresh blocks.
  std::int64_t reviving = 0;
  const std::int64_t hits = for_each_hit(key, tokens / block_size_, [&](std::int32_t block) {
    reviving += pool_.is_free(block) ? 1 : 0;
  });
  return watermark_.admits(pool_, blocks_for(tokens) - hits + reviving);
}

PrefixAdmission PagedAllocator::admit_prefix(const PrefixKey& key, std::int64_t tokens,
                                             std::int64_t final_tokens) {
  if (!pool_.prefix_caching() || key.block_hashes.empty()) {
    return {admit(key.sequence, tokens, final_tokens), 0};
  }
  if (!can_admit_prefix(key, tokens, final_tokens)) {
    throw_admitted_without_room(kName, key.sequence);
  }
  if (tables_.contains(key.sequence)) throw_sequence_error(kName, key.sequence, "admitted twice");
  if (!tables_.emplace_keeps_values()) cohort_.dissolve();
  BlockTable* t = tables_.emplace(key.sequence);
  t->sequence = key.sequence;
  t->joined = -1;
  t->held = 0;
  t->blocks.clear();
  t->hashes = key.block_hashes;
  const std::int64_t hits = for_each_hit(key, tokens / block_size_, [&](std::int32_t block) {
    pool_.share(block);
    t->blocks.push_back(block);
    ++t->held;
  });
  // The host tier's blocks after them are loaded into fresh blocks (taken with the rest
  // below), and named once the step that loads them completes.
  const std::int64_t loaded = host_hits(key, hits, tokens / block_size_);
  if (HostBlockCache* host = pool_.host()) {
    for (std::int64_t k = hits; k < hits + loaded; ++k)
      host->touch(identity(key.sequence, key.block_hashes, k));
  }
  t->committed_blocks = hits;
  t->tokens = hits * block_size_;
  t->spare = 0;
  token_states_ += t->tokens;
  grow(*t, tokens - t->tokens);
  return {(hits + loaded) * block_size_, loaded * block_size_};
}

void PagedAllocator::commit_computed(std::int64_t sequence, std::int64_t computed_tokens) {
  BlockTable& t = table(sequence);
  if (t.hashes.empty()) return;
  const std::int64_t full = std::min(computed_tokens / block_size_, t.held);
  if (t.committed_blocks < full && pool_.anonymous()) identify_blocks();
  for (std::int64_t k = t.committed_blocks; k < full; ++k)
    pool_.name(t.blocks[static_cast<std::size_t>(k)], identity(sequence, t.hashes, k));
  t.committed_blocks = std::max(t.committed_blocks, full);
}

}  // namespace servesim
