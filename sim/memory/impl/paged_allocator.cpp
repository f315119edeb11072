#include "sim/memory/impl/paged_allocator.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <string>

#include "sim/core/error.h"
#include "sim/memory/impl/block_watermark.h"

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
      pool_(whole_blocks(capacity_tokens, block_size), prefix_caching, host_cache_blocks,
            /*anonymous=*/true),
      watermark_(watermark_fraction, pool_.total()),
      cohort_(block_size) {}

void PagedAllocator::throw_unknown(std::int64_t sequence) {
  throw_sequence_error(kName, sequence, "is not held");
}

bool PagedAllocator::fits_when_empty(std::int64_t final_tokens) const {
  return blocks_for(final_tokens) <= pool_.total();
}

bool PagedAllocator::can_admit(std::int64_t tokens, std::int64_t /*final_tokens*/) const {
  return watermark_.admits(pool_, blocks_for(tokens));
}

std::int64_t PagedAllocator::admit(std::int64_t sequence, std::int64_t tokens,
                                   std::int64_t final_tokens) {
  if (!can_admit(tokens, final_tokens)) {
    throw_admitted_without_room(kName, sequence);
  }
  if (tables_.contains(sequence)) throw_sequence_error(kName, sequence, "admitted twice");
  // A new table may move the others, which the cohort points to.
  if (!tables_.emplace_keeps_values()) cohort_.dissolve();
  BlockTable* t = tables_.emplace(sequence);
  t->sequence = sequence;
  t->tokens = 0;
  t->spare = 0;
  t->joined = -1;
  t->held = 0;
  t->blocks.clear();  // a pooled table keeps its capacity
  t->hashes = {};
  t->committed_blocks = 0;
  grow(*t, tokens);
  return 0;
}

bool PagedAllocator::can_grow(std::int64_t sequence, std::int64_t tokens) const {
  return fits(table(sequence), tokens);
}

void PagedAllocator::grow(std::int64_t sequence, std::int64_t tokens) {
  BlockTable& t = table(sequence);
  if (tokens < 0 || !fits(t, tokens)) {
    throw_no_block_to_grow(kName, sequence, tokens);
  }
  // A member grown on its own: the plan grows its batch one at a time (a scheduler's plain
  // path), which would take every member out one by one, in O(cohort) each.
  if (t.joined >= 0) cohort_.dissolve();
  grow(t, tokens);
}

bool PagedAllocator::try_grow(std::int64_t sequence, std::int64_t tokens) {
  BlockTable& t = table(sequence);
  if (tokens < 0 || !fits(t, tokens)) return false;
  if (t.joined >= 0) cohort_.dissolve();  // as grow
  grow(t, tokens);
  return true;
}

void PagedAllocator::release(std::int64_t sequence) {
  BlockTable& t = table(sequence);
  if (t.joined >= 0) cohort_.leave(t);
  if (pool_.anonymous()) {
    pool_.give_back_anonymous(t.held);
  } else {
    pool_.give_back(t.blocks);
  }
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

void PagedAllocator::identify_blocks() {
  std::int32_t next = 0;
  tables_.for_each([&](std::int64_t, BlockTable& t) {
    for (std::int64_t k = 0; k < t.held; ++k)
      t.blocks.push_back(next++);
  });
  pool_.identify(next);
}

KvUsage PagedAllocator::usage(std::int64_t /*next_final_tokens*/) const {
  check_conservation();
  return pool_.usage(block_size_, physical_token_states());
}

std::size_t PagedAllocator::grow_each(std::span<const std::int64_t> sequences, std::int64_t tokens,
                                      bool after) {
  if (tokens < 0) return 0;
  std::size_t grown = 0;
  const std::size_t members = cohort_.size();
  if (tokens == 1 && after) {
    // The cohort is the batch grown so far, which these sequences continue. After a partial
    // round its last tables are these, a round behind (the preemptions took some out): they
    // grow first, with no look-up; any others join after them.
    if (cohort_.behind() > 0) {
      if (const std::optional<std::size_t> caught = cohort_.catch_up(sequences, pool_)) {
        grown = *caught;
        token_states_ += static_cast<std::int64_t>(grown);
        if (cohort_.behind() > 0) return grown;  // refused again
      } else {
        cohort_.drop_behind();
      }
    }
  } else if (tokens == 1 && members > 0 && sequences.size() >= members &&
             cohort_.is(sequences.first(members))) {
    // The last batch again (perhaps with new sequences after it): one round, no look-ups;
    // short of blocks, the part of it single grows would get through.
    if (cohort_.blocks_next_round() <= pool_.free()) {
      token_states_ += cohort_.round(pool_);
      grown = members;
    } else {
      // The first refused finds no free block: the grows stop there.
      grown = cohort_.partial_round(pool_);
      token_states_ += static_cast<std::int64_t>(grown);
      return grown;
    }
  } else {
    cohort_.dissolve();
  }
  // The rest one at a time, looked up; each joins the cohort, which then is what was grown.
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
  join_cohort(sequences);
}

void PagedAllocator::join_cohort(std::span<const std::int64_t> sequences) {
  for (const std::int64_t sequence : sequences) {
    BlockTable& t = table(sequence);
    if (t.joined >= 0) {
      throw InvariantError("paged allocator: sequence " + std::to_string(sequence) +
                           " listed twice for decode rounds");
    }
    cohort_.join(t);
  }
}

bool PagedAllocator::cohort_continues_into(std::span<const std::int64_t> sequences) {
  const std::size_t members = cohort_.size();
  if (members == 0 || members > sequences.size() || !cohort_.is(sequences.first(members))) {
    return false;
  }
  join_cohort(sequences.subspan(members));
  return true;
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

void PagedAllocator::decode_stretches(std::span<const std::int64_t> sequences,
                                      std::int64_t max_rounds,
                                      const std::function<bool(const DecodeRoundStretch&)>& go_on,
                                      std::vector<DecodeRoundStretch>& stretches) {
  if (!pool_.anonymous() || !cohort_continues_into(sequences)) {
    IDecodeRoundAllocator::decode_stretches(sequences, max_rounds, go_on, stretches);
    return;
  }
  cohort_.plan_stretches(max_rounds, pool_.free(), watermark_.blocks(), go_on, stretches);
}

void PagedAllocator::grow_decode_stretches(std::span<const std::int64_t> sequences,
                                           std::span<const DecodeRoundStretch> stretches,
                                           std::int64_t next_final_tokens,
                                           std::span<KvUsage> usages) {
  if (stretches.size() <= 1) {
    grow_decode_rounds(sequences, next_final_tokens, usages);
    return;
  }
  if (!pool_.anonymous() || !cohort_.is(sequences)) {
    throw InvariantError(
        "paged allocator: decode stretches past a preemption need the cohort "
        "of an anonymous pool");
  }
  // As grow_decode_rounds, the blocks counted round by round and handed out at the end; a
  // preempted table leaves with the blocks counted for it so far.
  const std::size_t first_needing = cohort_.needing_group();
  std::int64_t counted = 0;
  for (const DecodeRoundStretch& stretch : stretches) {
    for (std::int64_t r = 0; r < stretch.rounds; ++r) {
      while (cohort_.size() > stretch.sequences) {
        const BlockTable& t = cohort_.leave_last(counted, first_needing);
        const std::int64_t sequence = t.sequence;
        pool_.give_back_anonymous(t.held);
        token_states_ -= t.tokens;
        tables_.erase(sequence);
      }
      if (cohort_.blocks_next_round() > pool_.free()) {
        throw InvariantError("kv_within_capacity",
                             "paged allocator: no free block for a decode round");
      }
      token_states_ += cohort_.count_round(pool_);
      usages[static_cast<std::size_t>(counted++)] = usage(next_final_tokens);
    }
  }
  cohort_.hand_out(counted, first_needing, pool_);
  check_conservation();
}

}  // namespace servesim
