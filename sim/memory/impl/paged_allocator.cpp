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

const PagedAllocator::BlockTable& PagedAllocator::table(std::int64_t sequence) const {
  const auto it = tables_.find(sequence);
  if (it == tables_.end()) {
    throw InvariantError("paged allocator: sequence " + std::to_string(sequence) +
                         " holds no blocks");
  }
  return it->second;
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
    throw InvariantError("paged allocator: admitted sequence " + std::to_string(sequence) +
                         " without room");
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
  auto it = tables_.find(sequence);
  if (it == tables_.end()) (void)table(sequence);  // throws
  BlockTable& t = it->second;
  const std::int64_t new_blocks =
      blocks_for(t.tokens + tokens) - static_cast<std::int64_t>(t.blocks.size());
  if (new_blocks > free_blocks_) {
    throw InvariantError("paged allocator: KV capacity exceeded growing sequence " +
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
    throw InvariantError("paged allocator: blocks not conserved (" + std::to_string(used_blocks_) +
                         " used + " + std::to_string(free_blocks_) +
                         " free != " + std::to_string(total_blocks_) + ")");
  }
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
