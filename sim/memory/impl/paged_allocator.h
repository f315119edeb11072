#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "sim/memory/decode_round_allocator.h"
#include "sim/memory/kv_cache_allocator.h"
#include "sim/memory/sequence_table.h"

namespace servesim {

// vLLM's PagedAttention allocation: the cache is cut into fixed blocks of `block_size`
// tokens, a sequence takes blocks as its tokens arrive, and the only waste is the unfilled
// tail of each sequence's last block. New sequences are admitted only while a watermark of
// free blocks remains, so running sequences can still grow (vLLM keeps 1%).
class PagedAllocator final : public IKvCacheAllocator, public IDecodeRoundAllocator {
 public:
  PagedAllocator(std::int64_t capacity_tokens, std::int64_t block_size,
                 double watermark_fraction = 0.01);

  bool fits_when_empty(std::int64_t final_tokens) const override;
  bool can_admit(std::int64_t tokens, std::int64_t final_tokens) const override;
  std::int64_t admit(std::int64_t sequence, std::int64_t tokens,
                     std::int64_t final_tokens) override;
  bool can_grow(std::int64_t sequence, std::int64_t tokens) const override;
  void grow(std::int64_t sequence, std::int64_t tokens) override;
  bool try_grow(std::int64_t sequence, std::int64_t tokens) override;
  std::size_t grow_each(std::span<const std::int64_t> sequences, std::int64_t tokens) override;
  void release(std::int64_t sequence) override;

  KvUsage usage(std::int64_t next_final_tokens) const override;
  IDecodeRoundAllocator* decode_rounds() override { return this; }
  // A sequence holding t tokens takes a new block in round r exactly when
  // (t + r - 1) is a multiple of the block size, so sequences are counted by t modulo the
  // block size and each round costs O(1) plus the blocks it hands out.
  std::int64_t decode_rounds_available(std::span<const std::int64_t> sequences,
                                       std::int64_t max_rounds) const override;
  void grow_decode_rounds(std::span<const std::int64_t> sequences, std::int64_t next_final_tokens,
                          std::span<KvUsage> usages) override;
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
    // Out of the decode cohort (below): the tokens held and the free slots in the last block
    // (blocks x block size - tokens). In it: both as of the round the table joined.
    std::int64_t tokens = 0;
    std::int64_t spare = 0;
    std::int64_t joined = -1;          // the cohort round it joined at; -1: not in the cohort
    std::size_t group = 0;             // in the cohort: its group (see Cohort)
    std::vector<std::int32_t> blocks;  // physical block ids, in logical order
  };
  std::int64_t blocks_for(std::int64_t tokens) const {
    return (tokens + block_size_ - 1) / block_size_;
  }
  // The table's tokens and spare slots now, in the cohort or not.
  std::int64_t tokens_of(const BlockTable& t) const {
    return t.joined < 0 ? t.tokens : t.tokens + (cohort_.round - t.joined);
  }
  std::int64_t spare_of(const BlockTable& t) const {
    return t.joined < 0 ? t.spare
                        : static_cast<std::int64_t>(t.blocks.size()) * block_size_ - tokens_of(t);
  }
  // Room for `tokens` more: the spare slots, then whole free blocks (no division).
  bool fits(const BlockTable& t, std::int64_t tokens) const {
    return tokens - spare_of(t) <= free_blocks_ * block_size_;
  }
  // The per-token path, for a table out of the cohort: conservation is checked with every
  // usage() (once an iteration).
  void grow(BlockTable& t, std::int64_t tokens) {
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
  // Checked with every usage() (once an iteration); the message is built out of line.
  void check_conservation() const {
    if (free_blocks_ >= 0 && used_blocks_ + free_blocks_ == total_blocks_ &&
        static_cast<std::int64_t>(free_list_.size()) - blocks_not_yet_taken_ == free_blocks_ &&
        token_states_ >= 0 && token_states_ <= used_blocks_ * block_size_) {
      [[likely]] return;
    }
    conservation_broken();
  }
  [[noreturn, gnu::noinline, gnu::cold]] void conservation_broken() const;

  std::int64_t block_size_;
  std::int64_t total_blocks_;
  std::int64_t watermark_blocks_;
  std::int64_t free_blocks_;
  std::int64_t used_blocks_ = 0;
  std::int64_t token_states_ = 0;
  SequenceTable<BlockTable> tables_;
  std::vector<std::int32_t> free_list_;  // free block ids; taken from the back
  // Blocks of decode rounds counted as used and still on the free list (grow_decode_rounds).
  std::int64_t blocks_not_yet_taken_ = 0;

  // A table's blocks from a run of rounds: from its first round on, one every block-size
  // rounds, the first being the run's first_block-th (see grow_decode_rounds).
  struct Handout {
    BlockTable* table;
    std::int64_t first_round;
    std::int64_t first_block;
  };

  // The decode cohort: the sequences of the last decode batch, in plan order, which a
  // decode round grows by one token each. Their tables are advanced lazily (tokens_of), so a
  // round costs O(1) plus the blocks it hands out, and a batch that repeats the last one,
  // with new sequences after it or finished ones gone, costs no look-up and no pass over its
  // tables. A table takes a block in the round that starts with its tokens a multiple of
  // the block size, so the cohort is kept in block-size groups of tables that take blocks
  // in the same rounds, each in plan order: the blocks of a round go out in the order
  // single grows would hand them out. Any other change to a table of the cohort settles
  // the table and takes it out.
  struct Cohort {
    std::vector<std::int64_t> sequences;  // in plan order
    // The tables by group, group 0 first, in one array (a run reads every group): group g
    // is grouped[group_start[g], group_start[g + 1]).
    std::vector<BlockTable*> grouped;
    std::vector<std::size_t> group_start;  // block size + 1 of them
    std::int64_t round = 0;                // rounds applied since the allocator was made
    std::size_t needing = 0;               // the group that takes blocks in the next round
    std::vector<Handout> handouts;         // grow_decode_rounds' working space

    std::span<BlockTable* const> group(std::size_t g) const {
      return {grouped.data() + group_start[g], group_start[g + 1] - group_start[g]};
    }
    std::int64_t group_size(std::size_t g) const {
      return static_cast<std::int64_t>(group_start[g + 1] - group_start[g]);
    }
    // Group g gained a table (or lost one): the groups after it start one later (earlier).
    void resize_group(std::size_t g, bool gained) {
      for (std::size_t later = g + 1; later < group_start.size(); ++later)
        group_start[later] = gained ? group_start[later] + 1 : group_start[later] - 1;
    }
  };
  Cohort cohort_;
  bool is_cohort(std::span<const std::int64_t> sequences) const {
    return std::equal(sequences.begin(), sequences.end(), cohort_.sequences.begin(),
                      cohort_.sequences.end());
  }
  // A table's tokens and spare slots made current, and the table marked out of the cohort.
  void settle(BlockTable& t);
  // Adds a settled table as the cohort's last sequence.
  void join_cohort(BlockTable& t);
  // Settles a table of the cohort (its tokens and spare slots now) and takes it out.
  void leave_cohort(BlockTable& t);
  // Settles every table and empties the cohort.
  void dissolve_cohort();
  // The cohort becomes `sequences` (settled tables, looked up), in that order.
  void form_cohort(std::span<const std::int64_t> sequences);
  // One round: every table of the cohort grows by one token. The caller has checked that
  // the blocks are free.
  void cohort_round();
  // The books of one round (blocks taken by the group needing them, one token per table);
  // the blocks taken.
  std::int64_t count_round();
  std::size_t previous_group(std::size_t group) const {
    return group == 0 ? static_cast<std::size_t>(block_size_) - 1 : group - 1;
  }
};

}  // namespace servesim
