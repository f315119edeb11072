#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "sim/memory/decode_round_allocator.h"
#include "sim/memory/impl/block_pool.h"
#include "sim/memory/impl/block_table.h"

namespace servesim {

// The paged allocator's fast path for decoding (IDecodeRoundAllocator): the sequences of the
// last decode batch, in plan order, which a decode round grows by one token each. Their
// tables are advanced lazily (tokens_of), so a round costs O(1) plus the blocks it hands
// out, and a batch that repeats the last one, with new sequences after it or finished ones
// gone, costs no look-up and no pass over its tables.
//
// A table takes a block in the round that starts with its tokens a multiple of the block
// size, so the cohort is kept in block-size groups of tables that take blocks in the same
// rounds, each in plan order: the blocks of a round go out in the order single grows would
// hand them out. Any other change to a table of the cohort settles the table and takes it
// out (leave).
class DecodeCohort {
 public:
  explicit DecodeCohort(std::int64_t block_size)
      : block_size_(block_size), group_start_(static_cast<std::size_t>(block_size) + 1, 0) {}

  // A table's tokens and spare slots now, in the cohort or not.
  std::int64_t tokens_of(const BlockTable& t) const {
    return t.joined < 0 ? t.tokens : t.tokens + (round_ - t.joined);
  }
  std::int64_t spare_of(const BlockTable& t) const {
    return t.joined < 0 ? t.spare : t.held * block_size_ - tokens_of(t);
  }

  std::size_t size() const { return sequences_.size(); }
  // Whether `sequences` are the cohort's, in its order, every table grown as far as the
  // cohort's rounds (none behind).
  bool is(std::span<const std::int64_t> sequences) const {
    return behind_ == 0 &&
           std::equal(sequences.begin(), sequences.end(), sequences_.begin(), sequences_.end());
  }
  // How many of the last tables are a round behind (partial_round), 0 when none.
  std::size_t behind() const { return behind_; }
  // The blocks the next round takes.
  std::int64_t blocks_next_round() const {
    group_joined();
    return group_size(needing_);
  }

  // Adds a settled table as the cohort's last sequence, in O(1): it takes its place in its
  // group when the groups are next read (group_joined).
  void join(BlockTable& t);
  // Settles a table of the cohort (its tokens and spare slots now) and takes it out.
  void leave(BlockTable& t);
  // Settles every table and empties the cohort.
  void dissolve();

  // One round, its blocks taken from `pool` now (the caller has checked they are free).
  // Returns the tokens it added (one per table).
  std::int64_t round(BlockPool& pool) {
    group_joined();
    for (BlockTable* t : group(needing_))
      take_blocks(pool, *t, 1);
    return advance();
  }
  // The round as single grows in plan order make it when `pool` holds fewer free blocks than
  // it takes: the tables before the first that finds no block grow; that one and every
  // later one stay in the cohort a round behind (behind()), in their groups, until
  // catch_up grows them or they leave. Returns the tables grown.
  std::size_t partial_round(BlockPool& pool);
  // After a partial round (and the preemptions that made room, whose tables left): grows the
  // tables behind, in plan order, as single grows would, up to the first that finds no free
  // block; `sequences` must begin with theirs, else nothing grows and nullopt says so.
  // Returns the tables grown.
  std::optional<std::size_t> catch_up(std::span<const std::int64_t> sequences, BlockPool& pool);
  // Settles the tables behind and takes them out, the rest staying as they are.
  void drop_behind();
  // One round whose blocks are only counted in `pool`, to be handed out by hand_out. Returns
  // the tokens it added.
  std::int64_t count_round(BlockPool& pool) {
    pool.count_taken(blocks_next_round());  // groups the joined tables
    return advance();
  }
  // Hands out the blocks counted by the last `rounds` rounds (count_round), the first of
  // which started with `first_needing` as needing_group(), table by table, as single grows
  // would have handed them out; then takes them off the pool's free list.
  void hand_out(std::int64_t rounds, std::size_t first_needing, BlockPool& pool);
  std::size_t needing_group() const { return needing_; }

  // The stretches of rounds through preemption (IDecodeRoundAllocator::decode_stretches) of
  // the cohort, none behind, with `free_blocks` free now, of which admissions leave
  // `reserved_blocks` (the watermark) to running sequences. Counts only: O(block size +
  // rounds + preempted tables).
  void plan_stretches(std::int64_t max_rounds, std::int64_t free_blocks,
                      std::int64_t reserved_blocks,
                      const std::function<bool(const DecodeRoundStretch&)>& go_on,
                      std::vector<DecodeRoundStretch>& stretches) const;
  // Takes the last table out of the cohort, none behind, settled with the blocks the last
  // `counted_rounds` rounds counted for it (count_round, the first of them starting with
  // `first_needing` as needing_group()) added to those it holds, and returns it: a
  // preempted sequence's, in O(block size) plus moving the tables grouped after it.
  BlockTable& leave_last(std::int64_t counted_rounds, std::size_t first_needing);

  // How many rounds, up to `max_rounds`, `free_blocks` cover for the cohort.
  std::int64_t rounds_covered(std::int64_t max_rounds, std::int64_t free_blocks) const;
  // The same for tables that are not the cohort, counted by their tokens modulo the block
  // size (`by_residue`, block size entries).
  std::int64_t rounds_covered(std::span<const std::int64_t> by_residue, std::int64_t max_rounds,
                              std::int64_t free_blocks) const;

 private:
  std::span<BlockTable* const> group(std::size_t g) const {
    return {grouped_.data() + group_start_[g], group_start_[g + 1] - group_start_[g]};
  }
  std::int64_t group_size(std::size_t g) const {
    return static_cast<std::int64_t>(group_start_[g + 1] - group_start_[g]);
  }
  // Group g lost a table: the groups after it start one earlier.
  void shrink_group(std::size_t g) {
    for (std::size_t later = g + 1; later < group_start_.size(); ++later)
      --group_start_[later];
  }
  std::size_t previous_group(std::size_t g) const {
    return g == 0 ? static_cast<std::size_t>(block_size_) - 1 : g - 1;
  }
  // Blocks a table of group g takes in the first `rounds` rounds from the one starting with
  // `first_needing` as the needing group (a round takes one from each table of its group).
  std::int64_t blocks_in_rounds(std::size_t g, std::int64_t rounds,
                                std::size_t first_needing) const {
    const std::int64_t first_round =
        (static_cast<std::int64_t>(first_needing) - static_cast<std::int64_t>(g) + block_size_) %
            block_size_ +
        1;
    return rounds >= first_round ? (rounds - first_round) / block_size_ + 1 : 0;
  }
  std::size_t next_group(std::size_t g) const {
    return g + 1 == static_cast<std::size_t>(block_size_) ? 0 : g + 1;
  }
  // The round's books: the next group needs blocks; the tokens added.
  std::int64_t advance() {
    ++round_;
    needing_ = previous_group(needing_);
    return static_cast<std::int64_t>(sequences_.size());
  }
  void settle(BlockTable& t);
  // Puts the tables joined since the last call into their groups, after the members each
  // group had (they come later in plan order): O(cohort + block size) once for any number
  // of joins, where inserting each table at once would move the groups after its own.
  void group_joined() const {
    if (!joined_.empty()) merge_joined();
  }
  void merge_joined() const;
  // Rounds covered by `free_blocks` when the round starting with group g takes blocks_of(g).
  template <class BlocksOf>
  std::int64_t rounds_covered(std::size_t first_group, std::int64_t max_rounds,
                              std::int64_t free_blocks, const BlocksOf& blocks_of) const;

  std::int64_t block_size_;
  std::vector<std::int64_t> sequences_;  // in plan order
  std::vector<BlockTable*> tables_;      // theirs, in the same order
  // The last behind_ tables are a round behind the rest: their `joined` is one round later, so
  // that tokens_of holds them where they were. No round passes while any is behind (is() is
  // false), so the group that needed blocks in the partial round is the one after needing_.
  std::size_t behind_ = 0;
  // The tables by group, group 0 first, in one array (a run reads every group): group g is
  // grouped_[group_start_[g], group_start_[g + 1]). Tables joined since the groups were last
  // read wait in joined_, in plan order. The grouping is a cache of sequences_' order, kept
  // by the const readers too.
  mutable std::vector<BlockTable*> grouped_;
  mutable std::vector<std::size_t> group_start_;  // block size + 1 of them
  mutable std::vector<BlockTable*> joined_;
  mutable std::vector<BlockTable*> merged_;        // merge_joined's working space
  mutable std::vector<std::size_t> joined_count_;  // merge_joined's counts by group
  mutable std::vector<std::int64_t> group_sizes_;  // plan_stretches' working space
  std::int64_t round_ = 0;                         // rounds applied since the cohort was made
  std::size_t needing_ = 0;                        // the group that takes blocks in the next round

  // hand_out's working space: a table's blocks from a run of rounds, from its first round
  // on, one every block-size rounds, the first being the run's first_block-th.
  struct Handout {
    BlockTable* table;
    std::int64_t first_round;
    std::int64_t first_block;
  };
  std::vector<Handout> handouts_;
};

}  // namespace servesim
