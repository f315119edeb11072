#include "sim/memory/impl/paged_allocator.h"

#include <cmath>
#include <string>

#include "sim/core/error.h"

namespace servesim {

PagedAllocator::PagedAllocator(std::int64_t capacity_tokens, std::int64_t block_size,
                               double watermark_fraction)
    : block_size_(block_size) {
  if (block_size <= 0) {
    throw InputError("allocator.block_size",
                     "expected a positive number of tokens, got " + std::to_string(block_size));
  }
  total_blocks_ = capacity_tokens / block_size;
  if (total_blocks_ <= 0) {
    throw InfeasibleError("the KV cache holds " + std::to_string(capacity_tokens) +
                          " tokens, less than one block of " + std::to_string(block_size));
  }
  watermark_blocks_ = static_cast<std::int64_t>(
      std::floor(watermark_fraction * static_cast<double>(total_blocks_)));
  if (total_blocks_ > INT32_MAX) {
    throw InfeasibleError("the KV cache holds more than 2^31 blocks; use a larger block size");
  }
  free_blocks_ = total_blocks_;
  // Lowest ids on top, so a fresh cache hands out blocks 0, 1, 2, ...
  free_list_.reserve(static_cast<std::size_t>(total_blocks_));
  for (std::int64_t id = total_blocks_ - 1; id >= 0; --id) {
    free_list_.push_back(static_cast<std::int32_t>(id));
  }
}

void PagedAllocator::throw_unknown(std::int64_t sequence) {
  throw InvariantError("paged allocator: sequence " + std::to_string(sequence) +
                       " holds no blocks");
}

bool PagedAllocator::fits_when_empty(std::int64_t final_tokens) const {
  return blocks_for(final_tokens) <= total_blocks_;
}

bool PagedAllocator::can_admit(std::int64_t tokens, std::int64_t /*final_tokens*/) const {
  // The watermark must not shut out a sequence that fits an otherwise empty cache.
  const std::int64_t needed = blocks_for(tokens);
  if (used_blocks_ == 0) return needed <= free_blocks_;
  return free_blocks_ - needed >= watermark_blocks_;
}

void PagedAllocator::admit(std::int64_t sequence, std::int64_t tokens, std::int64_t final_tokens) {
  if (!can_admit(tokens, final_tokens)) {
    throw InvariantError("kv_within_capacity", "paged allocator: admitted sequence " +
                                                   std::to_string(sequence) + " without room");
  }
  ++epoch_;
  BlockTable* t = tables_.emplace(sequence);
  if (t == nullptr) {
    throw InvariantError("paged allocator: sequence " + std::to_string(sequence) +
                         " admitted twice");
  }
  t->sequence = sequence;
  t->tokens = 0;
  t->spare = 0;
  t->blocks.clear();  // a pooled table keeps its capacity
  grow(sequence, tokens);
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
  grow(t, tokens);
}

bool PagedAllocator::try_grow(std::int64_t sequence, std::int64_t tokens) {
  BlockTable& t = table(sequence);
  if (tokens < 0 || !fits(t, tokens)) return false;
  grow(t, tokens);
  return true;
}

std::size_t PagedAllocator::grow_each(std::span<const std::int64_t> sequences,
                                      std::int64_t tokens) {
  if (tokens < 0) return 0;
  std::vector<BlockTable*>& log = grow_log_.tables;
  if (grow_log_.epoch != epoch_) {
    log.clear();
  } else if (log.size() + sequences.size() > 2 * tables_.size()) {
    // Only the last tables_.size() entries can be asked for: keep the log that short.
    log.erase(log.begin(),
              log.end() - static_cast<std::ptrdiff_t>(std::min(log.size(), tables_.size())));
  }
  const auto find = tables_.finder();  // the index's geometry in registers for the loop
  const std::size_t logged = log.size();
  log.resize(logged + sequences.size());
  std::size_t grown = 0;
  const std::size_t count = sequences.size();
  for (std::size_t i = 0; i < count; ++i) {
    const std::int64_t sequence = sequences[i];
    // Tables are found through the index: fetch the entries a few sequences ahead, then
    // (once those have arrived) their tables.
    if (i + 8 < count) find.prefetch_entry(sequences[i + 8]);
    if (i + 4 < count) find.prefetch_value(sequences[i + 4]);
    BlockTable* t = find(sequence);
    if (t == nullptr) throw_unknown(sequence);
    if (!fits(*t, tokens)) break;
    grow(*t, tokens);
    log[logged + grown++] = t;
  }
  log.resize(logged + grown);
  grow_log_.epoch = epoch_;
  return grown;
}

void PagedAllocator::take_blocks(BlockTable& t, std::int64_t uncovered_tokens) {
  const std::int64_t new_blocks = blocks_for(uncovered_tokens);
  t.spare = new_blocks * block_size_ - uncovered_tokens;
  for (std::int64_t i = 0; i < new_blocks; ++i) {
    t.blocks.push_back(free_list_.back());
    free_list_.pop_back();
  }
  free_blocks_ -= new_blocks;
  used_blocks_ += new_blocks;
}

void PagedAllocator::release(std::int64_t sequence) {
  ++epoch_;
  const BlockTable& t = table(sequence);
  const auto blocks = static_cast<std::int64_t>(t.blocks.size());
  free_list_.insert(free_list_.end(), t.blocks.rbegin(), t.blocks.rend());
  free_blocks_ += blocks;
  used_blocks_ -= blocks;
  token_states_ -= t.tokens;
  tables_.erase(sequence);
  check_conservation();
}

void PagedAllocator::check_conservation() const {
  if (free_blocks_ < 0 || used_blocks_ + free_blocks_ != total_blocks_ ||
      static_cast<std::int64_t>(free_list_.size()) != free_blocks_ || token_states_ < 0 ||
      token_states_ > used_blocks_ * block_size_) {
    throw InvariantError("blocks_conserved", "paged allocator: " + std::to_string(used_blocks_) +
                                                 " used + " + std::to_string(free_blocks_) +
                                                 " free != " + std::to_string(total_blocks_) +
                                                 " blocks, or tokens outside them");
  }
}

void PagedAllocator::group_by_residue(std::span<const std::int64_t> sequences) const {
  DecodeGroups& d = decode_groups_;
  if (d.epoch == epoch_ &&
      std::equal(sequences.begin(), sequences.end(), d.sequences.begin(), d.sequences.end())) {
    return;  // decode_rounds_available grouped them, and nothing changed since
  }
  const auto groups = static_cast<std::size_t>(block_size_);
  d.epoch = epoch_;
  d.sequences.assign(sequences.begin(), sequences.end());
  d.tables.clear();
  const std::vector<BlockTable*>& log = grow_log_.tables;
  const std::size_t n = sequences.size();
  if (grow_log_.epoch == epoch_ && log.size() >= n &&
      std::equal(sequences.begin(), sequences.end(), log.end() - static_cast<std::ptrdiff_t>(n),
                 [](std::int64_t s, const BlockTable* t) { return s == t->sequence; })) {
    d.tables.assign(log.end() - static_cast<std::ptrdiff_t>(n), log.end());
  } else {
    for (const std::int64_t sequence : sequences)
      d.tables.push_back(const_cast<BlockTable*>(&table(sequence)));
  }
  d.group_start.assign(groups + 1, 0);
  for (const BlockTable* t : d.tables)
    ++d.group_start[static_cast<std::size_t>(t->residue(block_size_)) + 1];
  for (std::size_t g = 0; g < groups; ++g)
    d.group_start[g + 1] += d.group_start[g];
  d.grouped.resize(d.tables.size());
  d.fill.assign(d.group_start.begin(), d.group_start.end() - 1);
  for (BlockTable* t : d.tables)
    d.grouped[d.fill[static_cast<std::size_t>(t->residue(block_size_))]++] = t;
}

std::int64_t PagedAllocator::decode_rounds_available(std::span<const std::int64_t> sequences,
                                                     std::int64_t max_rounds) const {
  group_by_residue(sequences);
  const std::vector<std::size_t>& group_start = decode_groups_.group_start;
  std::int64_t taken = 0;
  std::size_t g = 0;
  for (std::int64_t round = 1; round <= max_rounds; ++round, g = next_group(g)) {
    taken += static_cast<std::int64_t>(group_start[g + 1] - group_start[g]);
    if (taken > free_blocks_) return round - 1;
  }
  return max_rounds;
}

void PagedAllocator::grow_decode_rounds(
    std::span<const std::int64_t> sequences, std::int64_t rounds, std::int64_t next_final_tokens,
    const std::function<void(std::int64_t round, const KvUsage& usage)>& after_round) {
  group_by_residue(sequences);
  ++epoch_;
  const std::vector<std::size_t>& group_start = decode_groups_.group_start;
  const std::vector<BlockTable*>& grouped = decode_groups_.grouped;
  const auto count = static_cast<std::int64_t>(sequences.size());
  std::size_t g = 0;
  for (std::int64_t round = 1; round <= rounds; ++round, g = next_group(g)) {
    for (std::size_t i = group_start[g]; i < group_start[g + 1]; ++i) {
      if (free_blocks_ == 0) {
        throw InvariantError("kv_within_capacity",
                             "paged allocator: no free block for a decode round");
      }
      grouped[i]->blocks.push_back(free_list_.back());
      free_list_.pop_back();
      --free_blocks_;
      ++used_blocks_;
    }
    token_states_ += count;
    after_round(round, usage(next_final_tokens));
  }
  const std::vector<BlockTable*>& tables = decode_groups_.tables;
  for (std::size_t i = 0; i < tables.size(); ++i) {
    if (i + 8 < tables.size()) __builtin_prefetch(tables[i + 8], 1);
    BlockTable* t = tables[i];
    t->tokens += rounds;
    t->spare = static_cast<std::int64_t>(t->blocks.size()) * block_size_ - t->tokens;
  }
  check_conservation();
}

// Any free block serves any request, so paging has no external fragmentation.
KvUsage PagedAllocator::usage(std::int64_t /*next_final_tokens*/) const {
  check_conservation();
  KvUsage u;
  u.capacity_tokens = capacity_tokens();
  u.token_states = token_states_;
  u.internal_fragmentation = used_blocks_ * block_size_ - token_states_;
  u.free = free_blocks_ * block_size_;
  return u;
}

}  // namespace servesim
