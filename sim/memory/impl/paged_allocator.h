#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "sim/memory/kv_cache_allocator.h"
#include "sim/memory/sequence_table.h"

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
  bool try_grow(std::int64_t sequence, std::int64_t tokens) override;
  std::size_t grow_each(std::span<const std::int64_t> sequences, std::int64_t tokens) override;
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
    std::int64_t sequence = 0;
    std::int64_t tokens = 0;
    std::int64_t spare = 0;            // free slots in the last block: blocks x block size - tokens
    std::vector<std::int32_t> blocks;  // physical block ids, in logical order
    // tokens modulo the block size, without dividing
    std::int64_t residue(std::int64_t block_size) const {
      return spare == 0 ? 0 : block_size - spare;
    }
  };
  std::int64_t blocks_for(std::int64_t tokens) const {
    return (tokens + block_size_ - 1) / block_size_;
  }
  // Room for `tokens` more: the spare slots, then whole free blocks (no division).
  bool fits(const BlockTable& t, std::int64_t tokens) const {
    return tokens - t.spare <= free_blocks_ * block_size_;
  }
  // The per-token path: conservation is checked with every usage() (once an iteration).
  void grow(BlockTable& t, std::int64_t tokens) {
    ++epoch_;
    t.tokens += tokens;
    token_states_ += tokens;
    if (tokens <= t.spare) {
      t.spare -= tokens;
    } else {
      take_blocks(t, tokens - t.spare);
    }
  }
  // Whole blocks for the tokens the last block's spare slots do not cover.
  void take_blocks(BlockTable& t, std::int64_t uncovered_tokens);
  // The sequence's table; throws for an unknown one.
  const BlockTable& table(std::int64_t sequence) const {
    const BlockTable* t = tables_.find(sequence);
    if (t == nullptr) throw_unknown(sequence);
    return *t;
  }
  [[noreturn]] static void throw_unknown(std::int64_t sequence);
  BlockTable& table(std::int64_t sequence) {
    return const_cast<BlockTable&>(std::as_const(*this).table(sequence));
  }
  void check_conservation() const;

  std::int64_t block_size_;
  std::int64_t total_blocks_;
  std::int64_t watermark_blocks_;
  std::int64_t free_blocks_;
  std::int64_t used_blocks_ = 0;
  std::int64_t token_states_ = 0;
  SequenceTable<BlockTable> tables_;
  std::vector<std::int32_t> free_list_;  // free block ids; taken from the back
  // Bumped by every change to a block table, so that the grouping below is known current.
  std::uint64_t epoch_ = 0;
  // The sequences of a decode run grouped by tokens modulo the block size, each group in the
  // given order, so that the blocks of one round go out in the order single grows would hand
  // them out. decode_rounds_available builds it and grow_decode_rounds reuses it; kept so
  // that a decode run neither allocates nor looks its sequences up twice.
  struct DecodeGroups {
    std::uint64_t epoch = ~std::uint64_t{0};
    std::vector<std::int64_t> sequences;
    std::vector<BlockTable*> tables, grouped;
    std::vector<std::size_t> group_start, fill;
  };
  mutable DecodeGroups decode_groups_;
  // Round r of a decode run grows t + r - 1 tokens to t + r, which takes a new block when
  // t + r - 1 = 0 mod the block size: round 1 the group of residue 0, then the residue
  // before the previous one's, wrapping around.
  std::size_t next_group(std::size_t group) const {
    return group == 0 ? static_cast<std::size_t>(block_size_) - 1 : group - 1;
  }
  void group_by_residue(std::span<const std::int64_t> sequences) const;
  // The tables grow_each grew since the last other change to a block table, in order: a
  // decode run's sequences are the ones its plan just grew, so grouping them needs no look-up.
  struct GrowLog {
    std::uint64_t epoch = 0;  // epoch_ after the last entry
    std::vector<BlockTable*> tables;
  };
  GrowLog grow_log_;
};

}  // namespace servesim
