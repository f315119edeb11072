#include "sim/memory/impl/decode_cohort.h"

namespace servesim {

void DecodeCohort::join(BlockTable& t) {
  // t takes a block in the k-th round from now (k = 1, 2, ...) when its tokens plus k - 1
  // are a multiple of the block size, and the group needing blocks then is `needing` minus
  // k - 1: so its group is needing + tokens, modulo the block size.
  t.group = static_cast<std::size_t>(
      (static_cast<std::int64_t>(needing_) + t.tokens % block_size_) % block_size_);
  t.joined = round_;
  sequences_.push_back(t.sequence);
  tables_.push_back(&t);
  joined_.push_back(&t);
}

void DecodeCohort::merge_joined() const {
  // A stable counting sort of the joined tables by group, each group's old members first.
  const std::size_t groups = group_start_.size() - 1;
  joined_count_.assign(groups, 0);
  for (const BlockTable* t : joined_)
    ++joined_count_[t->group];
  merged_.resize(grouped_.size() + joined_.size());
  std::size_t at = 0;
  for (std::size_t g = 0; g < groups; ++g) {
    const std::size_t old_begin = group_start_[g];
    const std::size_t old_end = group_start_[g + 1];
    std::copy(grouped_.begin() + static_cast<std::ptrdiff_t>(old_begin),
              grouped_.begin() + static_cast<std::ptrdiff_t>(old_end),
              merged_.begin() + static_cast<std::ptrdiff_t>(at));
    group_start_[g] = at;
    at += old_end - old_begin;
    const std::size_t joining = joined_count_[g];
    joined_count_[g] = at;  // from here on: where group g's next joined table goes
    at += joining;
  }
  group_start_[groups] = at;
  for (BlockTable* t : joined_)
    merged_[joined_count_[t->group]++] = t;
  grouped_.swap(merged_);
  joined_.clear();
}

void DecodeCohort::settle(BlockTable& t) {
  t.tokens = tokens_of(t);
  t.spare = t.held * block_size_ - t.tokens;
  t.joined = -1;
}

void DecodeCohort::leave(BlockTable& t) {
  group_joined();
  settle(t);
  const auto at = std::find(sequences_.begin(), sequences_.end(), t.sequence);
  if (static_cast<std::size_t>(sequences_.end() - at) <= behind_) --behind_;
  tables_.erase(tables_.begin() + (at - sequences_.begin()));
  sequences_.erase(at);
  const auto first = grouped_.begin() + static_cast<std::ptrdiff_t>(group_start_[t.group]);
  const auto last = grouped_.begin() + static_cast<std::ptrdiff_t>(group_start_[t.group + 1]);
  grouped_.erase(std::find(first, last, &t));
  shrink_group(t.group);
}

void DecodeCohort::dissolve() {
  for (BlockTable* t : grouped_)
    settle(*t);
  for (BlockTable* t : joined_)
    settle(*t);
  grouped_.clear();
  joined_.clear();
  tables_.clear();
  std::fill(group_start_.begin(), group_start_.end(), 0);
  sequences_.clear();
  behind_ = 0;
}

std::size_t DecodeCohort::partial_round(BlockPool& pool) {
  group_joined();
  // The needing group is in plan order: its first `free` tables get the free blocks, and the
  // next one is the first refused.
  const std::span<BlockTable* const> needing = group(needing_);
  const auto free = static_cast<std::size_t>(pool.free());
  const BlockTable* refused = needing[free];
  const std::size_t kept = static_cast<std::size_t>(
      std::find(tables_.begin(), tables_.end(), refused) - tables_.begin());
  for (BlockTable* t : needing.first(free))
    take_blocks(pool, *t, 1);
  // The rest stay where they were while the round passes them.
  for (std::size_t i = kept; i < tables_.size(); ++i)
    ++tables_[i]->joined;
  behind_ = tables_.size() - kept;
  ++round_;
  needing_ = previous_group(needing_);
  return kept;
}

std::optional<std::size_t> DecodeCohort::catch_up(std::span<const std::int64_t> sequences,
                                                  BlockPool& pool) {
  const std::size_t first = sequences_.size() - behind_;
  if (sequences.size() < behind_ ||
      !std::equal(sequences_.begin() + static_cast<std::ptrdiff_t>(first), sequences_.end(),
                  sequences.begin())) {
    return std::nullopt;
  }
  // The partial round's needing group: its tables take a block as they catch up.
  const std::size_t catching = next_group(needing_);
  std::size_t grown = 0;
  for (; grown < behind_; ++grown) {
    BlockTable& t = *tables_[first + grown];
    if (t.group == catching) {
      if (pool.free() == 0) break;
      take_blocks(pool, t, 1);
    }
    --t.joined;
  }
  behind_ -= grown;
  return grown;
}

void DecodeCohort::drop_behind() {
  if (behind_ == 0) return;
  group_joined();
  const std::size_t kept = tables_.size() - behind_;
  for (std::size_t i = kept; i < tables_.size(); ++i)
    settle(*tables_[i]);  // out of the cohort: joined is -1 now
  sequences_.resize(kept);
  tables_.resize(kept);
  behind_ = 0;
  // The groups without the tables that left, each still in plan order.
  std::size_t out = 0;
  std::size_t begin = 0;
  for (std::size_t g = 0; g + 1 < group_start_.size(); ++g) {
    const std::size_t end = group_start_[g + 1];
    group_start_[g] = out;
    for (std::size_t i = begin; i < end; ++i) {
      if (grouped_[i]->joined >= 0) grouped_[out++] = grouped_[i];
    }
    begin = end;
  }
  group_start_.back() = out;
  grouped_.resize(out);
}

void DecodeCohort::plan_stretches(std::int64_t max_rounds, std::int64_t free_blocks,
                                  std::int64_t reserved_blocks,
                                  const std::function<bool(const DecodeRoundStretch&)>& go_on,
                                  std::vector<DecodeRoundStretch>& stretches) const {
  group_joined();
  group_sizes_.resize(static_cast<std::size_t>(block_size_));
  for (std::size_t g = 0; g < group_sizes_.size(); ++g)
    group_sizes_[g] = group_size(g);
  std::size_t members = tables_.size();
  std::int64_t free = free_blocks;
  DecodeRoundStretch stretch{0, members, 0};
  std::size_t g = needing_;
  for (std::int64_t round = 0; round < max_rounds; ++round, g = previous_group(g)) {
    std::int64_t needed = group_sizes_[g];
    if (needed > free) {
      // Short of blocks: whatever order the tables ask in, the round goes through once the
      // newest tables that left freed enough for those before them (each leaves only while
      // one before it is refused, and none before the first refused one can leave).
      while (needed > free) {
        if (members == 1) {
          stretches.push_back(stretch);  // the round would empty the batch
          return;
        }
        const BlockTable& t = *tables_[--members];
        // Its blocks before this round: those it holds, and one for each round so far that
        // found it at a block's end.
        free += t.held + blocks_in_rounds(t.group, round, needing_);
        if (t.group == g) --needed;
        --group_sizes_[t.group];
      }
      stretches.push_back(stretch);
      stretch = {1, members, (free - needed - reserved_blocks) * block_size_};
      if (!go_on(stretch)) break;  // the rounds end with this one
    } else {
      ++stretch.rounds;
    }
    free -= needed;
  }
  stretches.push_back(stretch);
}

BlockTable& DecodeCohort::leave_last(std::int64_t counted_rounds, std::size_t first_needing) {
  group_joined();
  BlockTable& t = *tables_.back();
  t.held += blocks_in_rounds(t.group, counted_rounds, first_needing);
  settle(t);
  tables_.pop_back();
  sequences_.pop_back();
  // The last table in plan order is its group's last.
  grouped_.erase(grouped_.begin() + static_cast<std::ptrdiff_t>(group_start_[t.group + 1] - 1));
  shrink_group(t.group);
  return t;
}

template <class BlocksOf>
std::int64_t DecodeCohort::rounds_covered(std::size_t first_group, std::int64_t max_rounds,
                                          std::int64_t free_blocks,
                                          const BlocksOf& blocks_of) const {
  std::int64_t taken = 0;
  std::size_t g = first_group;
  for (std::int64_t round = 1; round <= max_rounds; ++round, g = previous_group(g)) {
    taken += blocks_of(g);
    if (taken > free_blocks) return round - 1;
  }
  return max_rounds;
}

std::int64_t DecodeCohort::rounds_covered(std::int64_t max_rounds, std::int64_t free_blocks) const {
  group_joined();
  return rounds_covered(needing_, max_rounds, free_blocks,
                        [this](std::size_t g) { return group_size(g); });
}

std::int64_t DecodeCohort::rounds_covered(std::span<const std::int64_t> by_residue,
                                          std::int64_t max_rounds, std::int64_t free_blocks) const {
  // Tables whose tokens are a multiple of the block size take a block in the first round,
  // those one short of it in the second, and so on.
  return rounds_covered(0, max_rounds, free_blocks,
                        [by_residue](std::size_t g) { return by_residue[g]; });
}

void DecodeCohort::hand_out(std::int64_t rounds, std::size_t first_needing, BlockPool& pool) {
  // Single grows hand the free list out from its back: round by round, and within a round
  // in plan order. In a cycle of block-size rounds every table takes one block, so the
  // table at position j of the group that first takes blocks in round r0 takes the
  // (before(r0) + j + k x members)-th block of the run, k = 0, 1, ..., where before(r0)
  // counts the blocks of the rounds before r0.
  group_joined();
  if (pool.anonymous()) {
    // Only counts to hand out: a table first taking a block in round r0 takes one in rounds
    // r0, r0 + block size, ... up to `rounds`.
    std::size_t g = first_needing;
    for (std::int64_t r0 = 1; r0 <= std::min(rounds, block_size_); ++r0, g = previous_group(g)) {
      const std::span<BlockTable* const> tables = group(g);
      const std::int64_t taken = (rounds - r0) / block_size_ + 1;
      for (std::size_t j = 0; j < tables.size(); ++j) {
        if (j + 8 < tables.size()) __builtin_prefetch(tables[j + 8], 1);
        tables[j]->held += taken;
      }
    }
    pool.drop_counted();
    return;
  }
  const auto members = static_cast<std::int64_t>(sequences_.size());
  handouts_.clear();
  std::int64_t before = 0;
  std::size_t g = first_needing;
  for (std::int64_t r0 = 1; r0 <= std::min(rounds, block_size_); ++r0, g = previous_group(g)) {
    const std::span<BlockTable* const> tables = group(g);
    for (std::size_t j = 0; j < tables.size(); ++j)
      handouts_.push_back({tables[j], r0, before + static_cast<std::int64_t>(j)});
    before += static_cast<std::int64_t>(tables.size());
  }
  // Each table's block list ends in a line of its own: fetch the tables well ahead, then
  // (once those have arrived) the ends of their lists.
  // The run's k-th block: from the top of the free stack down, or (prefix caching) the k-th
  // the pool counted out of its free queue.
  const std::span<const std::int32_t> free_list = pool.free_list();
  const bool queue = pool.queued();
  const std::int32_t* first = queue ? pool.counted_blocks().data() : nullptr;
  const std::int32_t* top = queue ? nullptr : free_list.data() + free_list.size() - 1;
  for (std::size_t i = 0; i < handouts_.size(); ++i) {
    if (i + 8 < handouts_.size()) __builtin_prefetch(handouts_[i + 8].table);
    if (i + 4 < handouts_.size()) {
      const std::vector<std::int32_t>& ahead = handouts_[i + 4].table->blocks;
      __builtin_prefetch(ahead.data() + ahead.size(), 1);
    }
    const Handout& h = handouts_[i];
    // Its blocks come from rounds first_round, first_round + block size, ... up to `rounds`.
    const std::int64_t taken = (rounds - h.first_round) / block_size_ + 1;
    std::vector<std::int32_t>& blocks = h.table->blocks;
    h.table->held += taken;
    const std::size_t had = blocks.size();
    blocks.resize(had + static_cast<std::size_t>(taken));
    std::int32_t* out = blocks.data() + had;
    if (queue) {
      for (std::int64_t k = 0, at = h.first_block; k < taken; ++k, at += members)
        out[k] = first[at];
    } else {
      for (std::int64_t k = 0, at = h.first_block; k < taken; ++k, at += members)
        out[k] = top[-at];
    }
  }
  pool.drop_counted();
}

}  // namespace servesim
