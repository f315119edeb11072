#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "sim/core/error.h"
#include "sim/memory/kv_cache_allocator.h"

namespace servesim {

// A stretch of decode rounds in which the same sequences grow (IDecodeRoundAllocator::
// decode_stretches): the first `sequences` of the batch grow by one token in each of its
// `rounds` rounds. Every stretch after the first begins with a round short of blocks, in
// which the batch's later sequences (the newest) were preempted, their blocks freed, to make
// room for the rest.
struct DecodeRoundStretch {
  std::int64_t rounds = 0;
  std::size_t sequences = 0;
  // After the stretch's first round: the most tokens a new sequence holding no cached block
  // could be admitted with (IKvCacheAllocator::can_admit); 0 for the first stretch.
  std::int64_t admissible_tokens = 0;
};

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

  // Decode rounds that go on through rounds short of blocks, as a plan that preempts makes
  // them (preempt_for_room, vLLM's order): in such a round the sequences grow in order, and
  // one that finds no block preempts the batch's last sequence still waiting to grow (its
  // newest), its blocks freed, until it grows or is itself the one preempted. Appends the
  // stretches (DecodeRoundStretch) of up to `max_rounds` rounds in all to `stretches`: the
  // first holds the rounds before any such round, each later one starts with one, and the
  // rounds go on past it only when `go_on` accepts the stretch as its first round leaves
  // the allocator (`stretches` then holds the ones before it); no round empties the batch.
  // O(sequences + rounds + preempted sequences). An allocator that cannot plan past a round
  // short of blocks (the default) gives decode_rounds_available's rounds as the only
  // stretch; one that can must not read usage()'s next_final_tokens, which the preempted
  // requests change. Not const: an allocator may rearrange its books for `sequences` (the
  // paged allocator's cohort takes in the sequences after the last decode batch's), leaving
  // what any call reports unchanged.
  virtual void decode_stretches(std::span<const std::int64_t> sequences, std::int64_t max_rounds,
                                const std::function<bool(const DecodeRoundStretch&)>& go_on,
                                std::vector<DecodeRoundStretch>& stretches) {
    (void)go_on;
    stretches.push_back({decode_rounds_available(sequences, max_rounds), sequences.size(), 0});
  }
  // Applies the rounds of `stretches` (from decode_stretches for `sequences`, possibly with
  // fewer rounds at the end), releasing the preempted sequences where their rounds stop,
  // exactly as grow_decode_stretches_in_turn would, and sets usages[r] to
  // usage(next_final_tokens) after round r + 1.
  virtual void grow_decode_stretches(std::span<const std::int64_t> sequences,
                                     std::span<const DecodeRoundStretch> stretches,
                                     std::int64_t next_final_tokens, std::span<KvUsage> usages) {
    if (stretches.size() > 1) {
      throw InvariantError("an allocator that plans one decode stretch was given " +
                           std::to_string(stretches.size()));
    }
    grow_decode_rounds(sequences, next_final_tokens, usages);
  }
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

// The plain path of grow_decode_stretches: one round at a time, each sequence grown on its
// own, a refused one releasing the batch's last sequences (newest first) until it grows or
// was the last itself.
inline void grow_decode_stretches_in_turn(IKvCacheAllocator& allocator,
                                          std::span<const std::int64_t> sequences,
                                          std::span<const DecodeRoundStretch> stretches,
                                          std::int64_t next_final_tokens,
                                          std::span<KvUsage> usages) {
  std::size_t batch = sequences.size();
  std::size_t round = 0;
  for (const DecodeRoundStretch& stretch : stretches) {
    for (std::int64_t r = 0; r < stretch.rounds; ++r) {
      std::size_t end = batch;
      for (std::size_t i = 0; i < end; ++i) {
        while (end > i && !allocator.can_grow(sequences[i], 1))
          allocator.release(sequences[--end]);
        if (end == i) break;  // it was the last one left
        allocator.grow(sequences[i], 1);
      }
      if (end != stretch.sequences) {
        throw InvariantError("a decode stretch of " + std::to_string(stretch.sequences) +
                             " sequences kept " + std::to_string(end));
      }
      batch = end;
      usages[round++] = allocator.usage(next_final_tokens);
    }
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
