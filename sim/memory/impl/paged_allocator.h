#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "sim/memory/kv_cache_allocator.h"

namespace servesim {

// vLLM's PagedAttention allocation: the cache is cut into fixed blocks of `block_size`
// tokens, a sequence takes blocks as its tokens arrive, and the only waste is the unfilled
// tail of each sequence's last block. New sequences are admitted only while a watermark of
// free blocks remains, so running sequences can still grow (vLLM keeps 1%).
class PagedAllocator final : public IKvCacheAllocator {
 public:
  PagedAllocator(std::int64_t capacity_tokens, std::int64_t block_size,
                 double watermark_fraction = 0.01);

  bool fits_when_empty(std::int64_t final_tokens) const override;
  bool can_admit(std::int64_t tokens, std::int64_t final_tokens) const override;
  void admit(std::int64_t sequence, std::int64_t tokens, std::int64_t final_tokens) override;
  bool can_grow(std::int64_t sequence, std::int64_t tokens) const override;
  void grow(std::int64_t sequence, std::int64_t tokens) override;
  void release(std::int64_t sequence) override;

  KvUsage usage(std::int64_t next_final_tokens) const override;
  // A sequence holding t tokens takes a new block in round r exactly when
  // (t + r - 1) is a multiple of the block size, so sequences are counted by t modulo the
  // block size and each round costs O(1) plus the blocks it hands out.
  std::int64_t decode_rounds_available(std::span<const std::int64_t> sequences,
                                       std::int64_t max_rounds) const override;
  void grow_decode_rounds(
      std::span<const std::int64_t> sequences, std::int64_t rounds, std::int64_t next_final_tokens,
      const std::function<void(std::int64_t round, const KvUsage& usage)>& after_round) override;
  std::int64_t capacity_tokens() const override { return total_blocks_ * block_size_; }
  std::int64_t sequences() const override { return static_cast<std::int64_t>(tables_.size()); }

  std::int64_t block_size() const { return block_size_; }
  std::int64_t total_blocks() const { return total_blocks_; }
  std::int64_t free_blocks() const { return free_blocks_; }
  // The physical blocks a sequence holds, in logical order (what a paged-attention kernel
  // reads through).
  const std::vector<std::int32_t>& block_table(std::int64_t sequence) const {
    return table(sequence).blocks;
  }

 private:
  struct BlockTable {
    std::int64_t tokens = 0;
    std::vector<std::int32_t> blocks;  // physical block ids, in logical order
  };
  std::int64_t blocks_for(std::int64_t tokens) const {
    return (tokens + block_size_ - 1) / block_size_;
  }
  // The sequence's table; throws for an unknown one. Remembers the last one found: the
  // scheduler asks can_grow and then grows the same sequence.
  BlockTable& table(std::int64_t sequence) const;
  void check_conservation() const;

  std::int64_t block_size_;
  std::int64_t total_blocks_;
  std::int64_t watermark_blocks_;
  std::int64_t free_blocks_;
  std::int64_t used_blocks_ = 0;
  std::int64_t token_states_ = 0;
  std::unordered_map<std::int64_t, BlockTable> tables_;
  mutable std::int64_t cached_sequence_ = -1;
  mutable BlockTable* cached_table_ = nullptr;  // map nodes stay put until erased
  std::vector<std::int32_t> free_list_;         // free block ids; taken from the back
};

}  // namespace servesim
