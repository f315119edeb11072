#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "sim/memory/kv_cache_allocator.h"

namespace servesim {

// The fast path of an allocator that can grow a whole decode batch at once and advance runs
// of decode iterations in bulk (bulk decoding, see DecodeRuns). Optional: an allocator that
// implements it returns itself from IKvCacheAllocator::decode_rounds(); every call must
// leave the allocator exactly as the plain calls it stands for would (a test holds the two
// equal for every allocator that implements it).
class IDecodeRoundAllocator {
 public:
  virtual ~IDecodeRoundAllocator() = default;

  // try_grow(sequence, tokens) for each of `sequences`, in order, stopping at the first it
  // cannot grow; returns how many it grew. The decode path of a plan: one call for the
  // whole batch rather than one per sequence.
  virtual std::size_t grow_each(std::span<const std::int64_t> sequences, std::int64_t tokens) = 0;
  // grow_each for sequences that come after those of the plan's last grow_each (or
  // grow_each_after) call in the same decode batch: the caller stopped at a refusal, made
  // room by preemption (releasing only sequences that call did not grow) and goes on.
  virtual std::size_t grow_each_after(std::span<const std::int64_t> sequences,
                                      std::int64_t tokens) {
    return grow_each(sequences, tokens);
  }

  // In one decode round each of `sequences`, in order, grows by one token, as one decode
  // iteration grows them. How many rounds, up to `max_rounds`, could follow one another
  // with every grow allowed (no frees in between); O(sequences + rounds), not
  // O(sequences x rounds).
  virtual std::int64_t decode_rounds_available(std::span<const std::int64_t> sequences,
                                               std::int64_t max_rounds) const = 0;
  // Applies usages.size() rounds (at most decode_rounds_available), leaving the allocator
  // exactly as that many rounds of grow(sequence, 1) calls, `sequences` in order, would, and
  // sets usages[r] to usage(next_final_tokens) after round r + 1.
  virtual void grow_decode_rounds(std::span<const std::int64_t> sequences,
                                  std::int64_t next_final_tokens, std::span<KvUsage> usages) = 0;
};

// The plain path of grow_each: try_grow one sequence at a time.
inline std::size_t grow_each_in_turn(IKvCacheAllocator& allocator,
                                     std::span<const std::int64_t> sequences, std::int64_t tokens) {
  std::size_t grown = 0;
  while (grown < sequences.size() && allocator.try_grow(sequences[grown], tokens))
    ++grown;
  return grown;
}

// The plain path of grow_decode_rounds: rounds of grow(sequence, 1), one at a time.
inline void grow_decode_rounds_in_turn(IKvCacheAllocator& allocator,
                                       std::span<const std::int64_t> sequences,
                                       std::int64_t next_final_tokens, std::span<KvUsage> usages) {
  for (KvUsage& after_round : usages) {
    for (const std::int64_t sequence : sequences)
      allocator.grow(sequence, 1);
    after_round = allocator.usage(next_final_tokens);
  }
}

// Grows each of `sequences` by `tokens`, in order, while the allocator can; returns how
// many it grew. Through the fast path where the allocator has one; `after` as
// IDecodeRoundAllocator::grow_each_after.
inline std::size_t grow_each(IKvCacheAllocator& allocator, std::span<const std::int64_t> sequences,
                             std::int64_t tokens, bool after = false) {
  if (IDecodeRoundAllocator* fast = allocator.decode_rounds()) {
    return after ? fast->grow_each_after(sequences, tokens) : fast->grow_each(sequences, tokens);
  }
  return grow_each_in_turn(allocator, sequences, tokens);
}

}  // namespace servesim
