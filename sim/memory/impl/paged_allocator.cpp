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

PagedAllocator::BlockTable& PagedAllocator::table(std::int64_t sequence) const {
  if (sequence == cached_sequence_) return *cached_table_;
  const auto it = tables_.find(sequence);
  if (it == tables_.end()) {
    throw InvariantError("paged allocator: sequence " + std::to_string(sequence) +
                         " holds no blocks");
  }
  cached_sequence_ = sequence;
  cached_table_ = const_cast<BlockTable*>(&it->second);
  return *cached_table_;
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
  if (!tables_.emplace(sequence, BlockTable{}).second) {
    throw InvariantError("paged allocator: sequence " + std::to_string(sequence) +
                         " admitted twice");
  }
  grow(sequence, tokens);
}

bool PagedAllocator::can_grow(std::int64_t sequence, std::int64_t tokens) const {
  const BlockTable& t = table(sequence);
  return blocks_for(t.tokens + tokens) - static_cast<std::int64_t>(t.blocks.size()) <= free_blocks_;
}

void PagedAllocator::grow(std::int64_t sequence, std::int64_t tokens) {
  BlockTable& t = table(sequence);
  const std::int64_t new_blocks =
      blocks_for(t.tokens + tokens) - static_cast<std::int64_t>(t.blocks.size());
  if (new_blocks > free_blocks_) {
    throw InvariantError("kv_within_capacity", "paged allocator: no free block to grow sequence " +
                                                   std::to_string(sequence));
  }
  t.tokens += tokens;
  for (std::int64_t i = 0; i < new_blocks; ++i) {
    t.blocks.push_back(free_list_.back());
    free_list_.pop_back();
  }
  free_blocks_ -= new_blocks;
  used_blocks_ += new_blocks;
  token_states_ += tokens;
  check_conservation();
}

void PagedAllocator::release(std::int64_t sequence) {
  const auto it = tables_.find(sequence);
  if (it == tables_.end()) (void)table(sequence);  // throws
  if (cached_sequence_ == sequence) cached_sequence_ = -1;
  const BlockTable& t = it->second;
  const auto blocks = static_cast<std::int64_t>(t.blocks.size());
  free_list_.insert(free_list_.end(), t.blocks.rbegin(), t.blocks.rend());
  free_blocks_ += blocks;
  used_blocks_ -= blocks;
  token_states_ -= t.tokens;
  tables_.erase(it);
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

std::int64_t PagedAllocator::decode_rounds_available(std::span<const std::int64_t> sequences,
                                                     std::int64_t max_rounds) const {
  std::vector<std::int64_t> by_residue(static_cast<std::size_t>(block_size_), 0);
  for (const std::int64_t sequence : sequences)
    ++by_residue[static_cast<std::size_t>(table(sequence).tokens % block_size_)];
  std::int64_t taken = 0;
  for (std::int64_t round = 1; round <= max_rounds; ++round) {
    // Round r grows t + r - 1 tokens to t + r: a new block when t + r - 1 = 0 mod block size.
    taken += by_residue[static_cast<std::size_t>((block_size_ - (round - 1) % block_size_) %
                                                 block_size_)];
    if (taken > free_blocks_) return round - 1;
  }
  return max_rounds;
}

void PagedAllocator::grow_decode_rounds(
    std::span<const std::int64_t> sequences, std::int64_t rounds, std::int64_t next_final_tokens,
    const std::function<void(std::int64_t round, const KvUsage& usage)>& after_round) {
  // The sequences grouped by tokens modulo the block size, each group in the given order, so
  // that the blocks of one round go out in the order single grows would hand them out.
  const auto groups = static_cast<std::size_t>(block_size_);
  std::vector<std::size_t> group_start(groups + 1, 0);
  std::vector<BlockTable*> tables;
  tables.reserve(sequences.size());
  for (const std::int64_t sequence : sequences) {
    BlockTable* t = &table(sequence);
    tables.push_back(t);
    ++group_start[static_cast<std::size_t>(t->tokens % block_size_) + 1];
  }
  for (std::size_t g = 0; g < groups; ++g)
    group_start[g + 1] += group_start[g];
  std::vector<BlockTable*> grouped(tables.size());
  std::vector<std::size_t> fill(group_start.begin(), group_start.end() - 1);
  for (BlockTable* t : tables)
    grouped[fill[static_cast<std::size_t>(t->tokens % block_size_)]++] = t;

  const auto count = static_cast<std::int64_t>(sequences.size());
  for (std::int64_t round = 1; round <= rounds; ++round) {
    const auto g =
        static_cast<std::size_t>((block_size_ - (round - 1) % block_size_) % block_size_);
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
  for (BlockTable* t : tables)
    t->tokens += rounds;
  check_conservation();
}

// Any free block serves any request, so paging has no external fragmentation.
KvUsage PagedAllocator::usage(std::int64_t /*next_final_tokens*/) const {
  KvUsage u;
  u.capacity_tokens = capacity_tokens();
  u.token_states = token_states_;
  u.internal_fragmentation = used_blocks_ * block_size_ - token_states_;
  u.free = free_blocks_ * block_size_;
  return u;
}

}  // namespace servesim
