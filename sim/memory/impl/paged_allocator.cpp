#include "sim/memory/impl/paged_allocator.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <string>

#include "sim/core/error.h"

namespace servesim {

namespace {

// The whole blocks a cache of `capacity_tokens` holds, checked.
std::int64_t whole_blocks(std::int64_t capacity_tokens, std::int64_t block_size) {
  if (block_size <= 0) {
    throw InputError("allocator.block_size",
                     "expected a positive number of tokens, got " + std::to_string(block_size));
  }
  const std::int64_t blocks = capacity_tokens / block_size;
  if (blocks <= 0) {
    throw InfeasibleError("the KV cache holds " + std::to_string(capacity_tokens) +
                          " tokens, less than one block of " + std::to_string(block_size));
  }
  return blocks;
}

}  // namespace

PagedAllocator::PagedAllocator(std::int64_t capacity_tokens, std::int64_t block_size,
                               double watermark_fraction, bool prefix_caching,
                               std::int64_t host_cache_blocks)
    : block_size_(block_size),
      watermark_blocks_(0),
      pool_(whole_blocks(capacity_tokens, block_size), prefix_caching, host_cache_blocks),
      cohort_(block_size) {
  watermark_blocks_ = static_cast<std::int64_t>(
      std::floor(watermark_fraction * static_cast<double>(pool_.total())));
}

void PagedAllocator::throw_unknown(std::int64_t sequence) {
  throw_sequence_error("paged allocator", sequence, "is not held");
}

bool PagedAllocator::fits_when_empty(std::int64_t final_tokens) const {
  return blocks_for(final_tokens) <= pool_.total();
}

bool PagedAllocator::can_admit(std::int64_t tokens, std::int64_t /*final_tokens*/) const {
  // The watermark must not shut out a sequence that fits an otherwise empty cache.
  const std::int64_t needed = blocks_for(tokens);
  if (pool_.used() == 0) return needed <= pool_.free();
  return pool_.free() - needed >= watermark_blocks_;
}

std::int64_t PagedAllocator::admit(std::int64_t sequence, std::int64_t tokens,
                                   std::int64_t final_tokens) {
  if (!can_admit(tokens, final_tokens)) {
    throw InvariantError("kv_within_capacity", "paged allocator: admitted sequence " +
                                                   std::to_string(sequence) + " without room");
  }
  if (tables_.contains(sequence))
    throw_sequence_error("paged allocator", sequence, "admitted twice");
  // A new table may move the others, which the cohort points to.
  if (!tables_.emplace_keeps_values()) cohort_.dissolve();
  BlockTable* t = tables_.emplace(sequence);
  t->sequence = sequence;
  t->tokens = 0;
  t->spare = 0;
  t->joined = -1;
  t->blocks.clear();  // a pooled table keeps its capacity
  t->hashes = {};
  t->committed_blocks = 0;
  grow(*t, tokens);
  return 0;
}

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
  const std::int64_t needed = blocks_for(tokens) - hits + reviving;
  if (pool_.used() == 0) return needed <= pool_.free();
  return pool_.free() - needed >= watermark_blocks_;
}

PrefixAdmission PagedAllocator::admit_prefix(const PrefixKey& key, std::int64_t tokens,
                                             std::int64_t final_tokens) {
  if (!pool_.prefix_caching() || key.block_hashes.empty()) {
    return {admit(key.sequence, tokens, final_tokens), 0};
  }
  if (!can_admit_prefix(key, tokens, final_tokens)) {
    throw InvariantError("kv_within_capacity", "paged allocator: admitted sequence " +
                                                   std::to_string(key.sequence) + " without room");
  }
  if (tables_.contains(key.sequence))
    throw_sequence_error("paged allocator", key.sequence, "admitted twice");
  if (!tables_.emplace_keeps_values()) cohort_.dissolve();
  BlockTable* t = tables_.emplace(key.sequence);
  t->sequence = key.sequence;
  t->joined = -1;
  t->blocks.clear();
  t->hashes = key.block_hashes;
  const std::int64_t hits = for_each_hit(key, tokens / block_size_, [&](std::int32_t block) {
    pool_.share(block);
    t->blocks.push_back(block);
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
  const std::int64_t full =
      std::min(computed_tokens / block_size_, static_cast<std::int64_t>(t.blocks.size()));
  for (std::int64_t k = t.committed_blocks; k < full; ++k)
    pool_.name(t.blocks[static_cast<std::size_t>(k)], identity(sequence, t.hashes, k));
  t.committed_blocks = std::max(t.committed_blocks, full);
}

bool PagedAllocator::can_grow(std::int64_t sequence, std::int64_t tokens) const {
  return fits(table(sequence), tokens);
}

void PagedAllocator::grow(std::int64_t sequence, std::int64_t tokens) {
  BlockTable& t = table(sequence);
  if (tokens < 0 || !fits(t, tokens)) {
    throw InvariantError("kv_within_capacity", "paged allocator: no free block to grow sequence " +
                                                   std::to_string(sequence) + " by " +
                                                   std::to_string(tokens) + " tokens");
  }
  if (t.joined >= 0) cohort_.leave(t);
  grow(t, tokens);
}

bool PagedAllocator::try_grow(std::int64_t sequence, std::int64_t tokens) {
  BlockTable& t = table(sequence);
  if (tokens < 0 || !fits(t, tokens)) return false;
  if (t.joined >= 0) cohort_.leave(t);
  grow(t, tokens);
  return true;
}

void PagedAllocator::release(std::int64_t sequence) {
  BlockTable& t = table(sequence);
  if (t.joined >= 0) cohort_.leave(t);
  pool_.give_back(t.blocks);
  token_states_ -= t.tokens;
  tables_.erase(sequence);
  check_conservation();
}

void PagedAllocator::conservation_broken() const {
  throw InvariantError("blocks_conserved", "paged allocator: " + std::to_string(pool_.used()) +
                                               " used + " + std::to_string(pool_.free()) +
                                               " free != " + std::to_string(pool_.total()) +
                                               " blocks, or tokens outside them");
}

KvUsage PagedAllocator::usage(std::int64_t /*next_final_tokens*/) const {
  check_conservation();
  return pool_.usage(block_size_, physical_token_states());
}

std::size_t PagedAllocator::grow_each(std::span<const std::int64_t> sequences,
                                      std::int64_t tokens) {
  if (tokens < 0) return 0;
  std::size_t grown = 0;
  const std::size_t members = cohort_.size();
  if (tokens == 1 && members > 0 && sequences.size() >= members &&
      cohort_.is(sequences.first(members)) && cohort_.blocks_next_round() <= pool_.free()) {
    // The last batch again (perhaps with new sequences after it): one round, no look-ups.
    token_states_ += cohort_.round(pool_);
    grown = members;
  } else {
    cohort_.dissolve();
  }
  // The rest one at a time; each joins the cohort, which then is what was grown.
  const auto find = tables_.finder();  // the index's geometry in registers for the loop
  const std::size_t count = sequences.size();
  for (std::size_t i = grown; i < count; ++i) {
    const std::int64_t sequence = sequences[i];
    // Tables are found through the index: fetch the entries a few sequences ahead, then
    // (once those have arrived) their tables.
    if (i + 8 < count) find.prefetch_entry(sequences[i + 8]);
    if (i + 4 < count) find.prefetch_value(sequences[i + 4]);
    BlockTable* t = find(sequence);
    if (t == nullptr) throw_unknown(sequence);
    if (t->joined >= 0) cohort_.leave(*t);  // listed twice, or after a mismatch
    if (!fits(*t, tokens)) break;
    grow(*t, tokens);
    if (tokens == 1) cohort_.join(*t);
    ++grown;
  }
  return grown;
}

void PagedAllocator::form_cohort(std::span<const std::int64_t> sequences) {
  cohort_.dissolve();
  for (const std::int64_t sequence : sequences) {
    BlockTable& t = table(sequence);
    if (t.joined >= 0) {
      throw InvariantError("paged allocator: sequence " + std::to_string(sequence) +
                           " listed twice for decode rounds");
    }
    cohort_.join(t);
  }
}

std::int64_t PagedAllocator::decode_rounds_available(std::span<const std::int64_t> sequences,
                                                     std::int64_t max_rounds) const {
  if (cohort_.is(sequences)) return cohort_.rounds_covered(max_rounds, pool_.free());
  // Not the last batch: look the tables up and count them by the round that takes their
  // next block.
  std::vector<std::int64_t> by_residue(static_cast<std::size_t>(block_size_), 0);
  for (const std::int64_t sequence : sequences)
    ++by_residue[static_cast<std::size_t>(cohort_.tokens_of(table(sequence)) % block_size_)];
  return cohort_.rounds_covered(by_residue, max_rounds, pool_.free());
}

void PagedAllocator::grow_decode_rounds(std::span<const std::int64_t> sequences,
                                        std::int64_t next_final_tokens, std::span<KvUsage> usages) {
  if (!cohort_.is(sequences)) form_cohort(sequences);
  // The rounds are counted first, each reported as it ends; the blocks they take are then
  // handed out table by table, which visits each table once however many rounds.
  const std::size_t first_needing = cohort_.needing_group();
  for (KvUsage& after_round : usages) {
    if (cohort_.blocks_next_round() > pool_.free()) {
      throw InvariantError("kv_within_capacity",
                           "paged allocator: no free block for a decode round");
    }
    token_states_ += cohort_.count_round(pool_);
    after_round = usage(next_final_tokens);
  }
  cohort_.hand_out(static_cast<std::int64_t>(usages.size()), first_needing, pool_);
  check_conservation();
}

}  // namespace servesim
