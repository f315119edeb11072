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
  cohort_.group_start.assign(static_cast<std::size_t>(block_size) + 1, 0);
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

std::int64_t PagedAllocator::admit(std::int64_t sequence, std::int64_t tokens,
                                   std::int64_t final_tokens) {
  if (!can_admit(tokens, final_tokens)) {
    throw InvariantError("kv_within_capacity", "paged allocator: admitted sequence " +
                                                   std::to_string(sequence) + " without room");
  }
  if (tables_.contains(sequence)) {
    throw InvariantError("paged allocator: sequence " + std::to_string(sequence) +
                         " admitted twice");
  }
  // A new table may move the others, which the cohort points to.
  if (!tables_.emplace_keeps_values()) dissolve_cohort();
  BlockTable* t = tables_.emplace(sequence);
  t->sequence = sequence;
  t->tokens = 0;
  t->spare = 0;
  t->joined = -1;
  t->blocks.clear();  // a pooled table keeps its capacity
  grow(*t, tokens);
  return 0;
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
  if (t.joined >= 0) leave_cohort(t);
  grow(t, tokens);
}

bool PagedAllocator::try_grow(std::int64_t sequence, std::int64_t tokens) {
  BlockTable& t = table(sequence);
  if (tokens < 0 || !fits(t, tokens)) return false;
  if (t.joined >= 0) leave_cohort(t);
  grow(t, tokens);
  return true;
}

std::size_t PagedAllocator::grow_each(std::span<const std::int64_t> sequences,
                                      std::int64_t tokens) {
  if (tokens < 0) return 0;
  std::size_t grown = 0;
  const std::size_t members = cohort_.sequences.size();
  if (tokens == 1 && members > 0 && sequences.size() >= members &&
      is_cohort(sequences.first(members)) && cohort_.group_size(cohort_.needing) <= free_blocks_) {
    // The last batch again (perhaps with new sequences after it): one round, no look-ups.
    cohort_round();
    grown = members;
  } else {
    dissolve_cohort();
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
    if (t->joined >= 0) leave_cohort(*t);  // listed twice, or after a mismatch
    if (!fits(*t, tokens)) break;
    grow(*t, tokens);
    if (tokens == 1) join_cohort(*t);
    ++grown;
  }
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
  BlockTable& t = table(sequence);
  if (t.joined >= 0) leave_cohort(t);
  const auto blocks = static_cast<std::int64_t>(t.blocks.size());
  free_list_.insert(free_list_.end(), t.blocks.rbegin(), t.blocks.rend());
  free_blocks_ += blocks;
  used_blocks_ -= blocks;
  token_states_ -= t.tokens;
  tables_.erase(sequence);
  check_conservation();
}

void PagedAllocator::conservation_broken() const {
  throw InvariantError("blocks_conserved", "paged allocator: " + std::to_string(used_blocks_) +
                                               " used + " + std::to_string(free_blocks_) +
                                               " free != " + std::to_string(total_blocks_) +
                                               " blocks, or tokens outside them");
}

void PagedAllocator::join_cohort(BlockTable& t) {
  Cohort& c = cohort_;
  // t takes a block in the k-th round from now (k = 1, 2, ...) when its tokens plus k - 1
  // are a multiple of the block size, and the group needing blocks then is `needing` minus
  // k - 1: so its group is needing + tokens, modulo the block size.
  t.group = static_cast<std::size_t>(
      (static_cast<std::int64_t>(c.needing) + t.tokens % block_size_) % block_size_);
  t.joined = c.round;
  c.sequences.push_back(t.sequence);
  c.grouped.insert(c.grouped.begin() + static_cast<std::ptrdiff_t>(c.group_start[t.group + 1]), &t);
  c.resize_group(t.group, true);
}

void PagedAllocator::settle(BlockTable& t) {
  t.tokens = tokens_of(t);
  t.spare = static_cast<std::int64_t>(t.blocks.size()) * block_size_ - t.tokens;
  t.joined = -1;
}

void PagedAllocator::leave_cohort(BlockTable& t) {
  Cohort& c = cohort_;
  settle(t);
  c.sequences.erase(std::find(c.sequences.begin(), c.sequences.end(), t.sequence));
  const auto first = c.grouped.begin() + static_cast<std::ptrdiff_t>(c.group_start[t.group]);
  const auto last = c.grouped.begin() + static_cast<std::ptrdiff_t>(c.group_start[t.group + 1]);
  c.grouped.erase(std::find(first, last, &t));
  c.resize_group(t.group, false);
}

void PagedAllocator::dissolve_cohort() {
  Cohort& c = cohort_;
  for (BlockTable* t : c.grouped)
    settle(*t);
  c.grouped.clear();
  std::fill(c.group_start.begin(), c.group_start.end(), 0);
  c.sequences.clear();
}

void PagedAllocator::form_cohort(std::span<const std::int64_t> sequences) {
  dissolve_cohort();
  for (const std::int64_t sequence : sequences) {
    BlockTable& t = table(sequence);
    if (t.joined >= 0) {
      throw InvariantError("paged allocator: sequence " + std::to_string(sequence) +
                           " listed twice for decode rounds");
    }
    join_cohort(t);
  }
}

void PagedAllocator::cohort_round() {
  for (BlockTable* t : cohort_.group(cohort_.needing)) {
    t->blocks.push_back(free_list_.back());
    free_list_.pop_back();
  }
  count_round();
}

std::int64_t PagedAllocator::count_round() {
  Cohort& c = cohort_;
  const std::int64_t taken = c.group_size(c.needing);
  free_blocks_ -= taken;
  used_blocks_ += taken;
  token_states_ += static_cast<std::int64_t>(c.sequences.size());
  ++c.round;
  c.needing = previous_group(c.needing);
  return taken;
}

std::int64_t PagedAllocator::decode_rounds_available(std::span<const std::int64_t> sequences,
                                                     std::int64_t max_rounds) const {
  // Sequences by the round (from the next one, modulo the block size) that takes their block.
  std::vector<std::int64_t> looked_up;
  const bool cohort = is_cohort(sequences);
  std::size_t g = cohort_.needing;
  if (!cohort) {  // not the last batch: look the tables up
    looked_up.assign(static_cast<std::size_t>(block_size_), 0);
    for (const std::int64_t sequence : sequences) {
      ++looked_up[static_cast<std::size_t>(tokens_of(table(sequence)) % block_size_)];
    }
    g = 0;
  }
  std::int64_t taken = 0;
  for (std::int64_t round = 1; round <= max_rounds; ++round, g = previous_group(g)) {
    taken += cohort ? cohort_.group_size(g) : looked_up[g];
    if (taken > free_blocks_) return round - 1;
  }
  return max_rounds;
}

void PagedAllocator::grow_decode_rounds(std::span<const std::int64_t> sequences,
                                        std::int64_t next_final_tokens, std::span<KvUsage> usages) {
  const auto rounds = static_cast<std::int64_t>(usages.size());
  if (!is_cohort(sequences)) form_cohort(sequences);
  Cohort& c = cohort_;
  // The rounds are counted first, each reported as it ends; the blocks they take are then
  // handed out table by table (below), which visits each table once however many rounds.
  const std::size_t first_needing = c.needing;
  const auto members = static_cast<std::int64_t>(c.sequences.size());
  for (KvUsage& after_round : usages) {
    if (c.group_size(c.needing) > free_blocks_) {
      throw InvariantError("kv_within_capacity",
                           "paged allocator: no free block for a decode round");
    }
    blocks_not_yet_taken_ += count_round();
    after_round = usage(next_final_tokens);
  }
  // Single grows hand the free list out from its back: round by round, and within a round
  // in plan order. In a cycle of block-size rounds every table takes one block, so the
  // table at position j of the group that first takes blocks in round r0 takes the
  // (before(r0) + j + k x members)-th block of the run, k = 0, 1, ..., where before(r0)
  // counts the blocks of the rounds before r0.
  std::vector<Handout>& handouts = c.handouts;
  handouts.clear();
  std::int64_t before = 0;
  std::size_t g = first_needing;
  for (std::int64_t r0 = 1; r0 <= std::min(rounds, block_size_); ++r0, g = previous_group(g)) {
    const std::span<BlockTable* const> group = c.group(g);
    for (std::size_t j = 0; j < group.size(); ++j)
      handouts.push_back({group[j], r0, before + static_cast<std::int64_t>(j)});
    before += static_cast<std::int64_t>(group.size());
  }
  // Each table's block list ends in a line of its own: fetch the tables well ahead, then
  // (once those have arrived) the ends of their lists.
  const auto free_count = static_cast<std::int64_t>(free_list_.size());
  const std::int32_t* top = free_list_.data() + free_count - 1;  // the block taken first
  for (std::size_t i = 0; i < handouts.size(); ++i) {
    if (i + 8 < handouts.size()) __builtin_prefetch(handouts[i + 8].table);
    if (i + 4 < handouts.size()) {
      const std::vector<std::int32_t>& ahead = handouts[i + 4].table->blocks;
      __builtin_prefetch(ahead.data() + ahead.size(), 1);
    }
    const Handout& h = handouts[i];
    // Its blocks come from rounds first_round, first_round + block size, ... up to `rounds`.
    const std::int64_t taken = (rounds - h.first_round) / block_size_ + 1;
    std::vector<std::int32_t>& blocks = h.table->blocks;
    const std::size_t held = blocks.size();
    blocks.resize(held + static_cast<std::size_t>(taken));
    std::int32_t* out = blocks.data() + held;
    for (std::int64_t k = 0, at = h.first_block; k < taken; ++k, at += members)
      out[k] = top[-at];
  }
  free_list_.resize(static_cast<std::size_t>(free_count - blocks_not_yet_taken_));
  blocks_not_yet_taken_ = 0;
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
