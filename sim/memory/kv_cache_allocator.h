#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace servesim {

// Where a replica's KV memory is, in token slots. The categories partition the capacity.
struct KvUsage {
  std::int64_t capacity_tokens = 0;
  std::int64_t token_states = 0;            // slots holding a token's K and V
  std::int64_t reserved = 0;                // reserved slots a running request will still fill
  std::int64_t internal_fragmentation = 0;  // allocated slots that will never hold a token
  std::int64_t external_fragmentation = 0;  // free slots unusable for the next reservation
  std::int64_t free = 0;
  std::int64_t used() const { return token_states + reserved + internal_fragmentation; }
};

// Grants KV memory to sequences. Knows nothing about batching: the scheduler asks, the
// allocator answers and keeps the books. Sequences are named by their request id.
// `final_tokens` is the length a sequence will reach (prompt plus output), which reservation
// policies size regions by; paged allocation ignores it.
class IKvCacheAllocator {
 public:
  virtual ~IKvCacheAllocator() = default;

  // Could a sequence of `final_tokens` ever be served, with the whole cache to itself?
  virtual bool fits_when_empty(std::int64_t final_tokens) const = 0;
  // Space for a sequence to start (or restart after preemption) holding `tokens` tokens.
  virtual bool can_admit(std::int64_t tokens, std::int64_t final_tokens) const = 0;
  virtual void admit(std::int64_t sequence, std::int64_t tokens, std::int64_t final_tokens) = 0;
  // Space for `tokens` more tokens of an admitted sequence.
  virtual bool can_grow(std::int64_t sequence, std::int64_t tokens) const = 0;
  virtual void grow(std::int64_t sequence, std::int64_t tokens) = 0;
  // grow when can_grow would allow it; whether it did. The scheduler's per-token path: an
  // allocator can answer both with one look-up.
  virtual bool try_grow(std::int64_t sequence, std::int64_t tokens) {
    if (!can_grow(sequence, tokens)) return false;
    grow(sequence, tokens);
    return true;
  }
  // Grows each of `sequences`, in order, by `tokens` while the allocator can (try_grow on
  // each); stops at the first it cannot grow and returns how many it grew. The decode path
  // of a plan: one call for the whole batch rather than one per sequence.
  virtual std::size_t grow_each(std::span<const std::int64_t> sequences, std::int64_t tokens) {
    std::size_t grown = 0;
    while (grown < sequences.size() && try_grow(sequences[grown], tokens))
      ++grown;
    return grown;
  }
  // Frees everything the sequence holds (finished or preempted).
  virtual void release(std::int64_t sequence) = 0;

  // Where the memory is. Free memory in holes too small for the reservation a request of
  // `next_final_tokens` would need (the head of the waiting queue; 0 when none waits) counts
  // as external fragmentation.
  virtual KvUsage usage(std::int64_t next_final_tokens) const = 0;
  virtual std::int64_t capacity_tokens() const = 0;
  virtual std::int64_t sequences() const = 0;

  // Decode rounds, for advancing runs of decode iterations in bulk. In one round each of
  // `sequences`, in order, grows by one token, as one decode iteration grows them.
  //
  // How many rounds, up to `max_rounds`, could follow one another with every grow allowed
  // (no frees in between). An allocator that cannot answer cheaply returns 0, which turns
  // bulk decoding off. Must cost O(sequences + rounds), not O(sequences x rounds).
  virtual std::int64_t decode_rounds_available(std::span<const std::int64_t> sequences,
                                               std::int64_t max_rounds) const {
    (void)sequences;
    (void)max_rounds;
    return 0;
  }
  // Applies usages.size() rounds (at most decode_rounds_available), leaving the allocator
  // exactly as that many rounds of grow(sequence, 1) calls, `sequences` in order, would, and
  // sets usages[r] to usage(next_final_tokens) after round r + 1. This default does just that,
  // one grow at a time.
  virtual void grow_decode_rounds(std::span<const std::int64_t> sequences,
                                  std::int64_t next_final_tokens, std::span<KvUsage> usages) {
    for (KvUsage& after_round : usages) {
      for (const std::int64_t sequence : sequences)
        grow(sequence, 1);
      after_round = usage(next_final_tokens);
    }
  }
};

}  // namespace servesim
