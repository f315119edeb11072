#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace servesim {

class IDecodeRoundAllocator;

// What a prefix cache knows of a sequence when it is admitted: the identities of the full
// blocks its content covers, at prefix_block_tokens() (block_hashes in
// sim/workload/token_content.h; empty when its tokens are its own), and the tokens it holds
// in all (its prompt plus those it generated before a preemption). The hashes must outlive
// the sequence's admission (the caller keeps them until it releases the sequence).
struct PrefixKey {
  std::int64_t sequence = 0;
  std::span<const std::uint64_t> block_hashes;
  std::int64_t tokens = 0;
};

// What admit_prefix found: the sequence's leading tokens it starts with computed, and how
// many of those come back from a host tier over the host link (the rest were on the GPU).
struct PrefixAdmission {
  std::int64_t cached_tokens = 0;
  std::int64_t host_tokens = 0;
};

// Where a replica's KV memory is, in token slots. The categories partition the capacity.
struct KvUsage {
  std::int64_t capacity_tokens = 0;
  std::int64_t token_states = 0;            // slots holding a token's K and V
  std::int64_t reserved = 0;                // reserved slots a running request will still fill
  std::int64_t internal_fragmentation = 0;  // allocated slots that will never hold a token
  std::int64_t external_fragmentation = 0;  // free slots unusable for the next reservation
  std::int64_t free = 0;
  // Free slots of blocks that still hold reusable KV (a prefix cache's): free for allocation,
  // which evicts them, and hittable until then. 0 without prefix caching.
  std::int64_t cached = 0;
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
  // Returns how many of those `tokens` (its leading ones) were already in the cache, their
  // K and V shared rather than computed again: 0 until an allocator caches prefixes.
  virtual std::int64_t admit(std::int64_t sequence, std::int64_t tokens,
                             std::int64_t final_tokens) = 0;
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
  // Frees everything the sequence holds (finished or preempted).
  virtual void release(std::int64_t sequence) = 0;

  // Where the memory is. Free memory in holes too small for the reservation a request of
  // `next_final_tokens` would need (the head of the waiting queue; 0 when none waits) counts
  // as external fragmentation.
  virtual KvUsage usage(std::int64_t next_final_tokens) const = 0;
  virtual std::int64_t capacity_tokens() const = 0;
  virtual std::int64_t sequences() const = 0;

  // The block size it identifies cached prefixes by (requests' block_hashes are computed at
  // it); 0 when it caches no prefixes.
  virtual std::int64_t prefix_block_tokens() const { return 0; }

  // Prefix caching. An allocator that caches no prefixes shares nothing: these answer as the
  // plain calls (no token cached, nothing to commit).
  // The leading tokens of `key`'s sequence whose K and V the cache holds now (whole blocks,
  // computed before this call), capped so that at least its last token is computed.
  virtual std::int64_t cached_prefix_tokens(const PrefixKey& key) const {
    (void)key;
    return 0;
  }
  // can_admit / admit for a sequence the cache may hold a prefix of: `tokens` counts its
  // cached tokens (cached_prefix_tokens, which admit returns: shared rather than allocated
  // when on the GPU, loaded into fresh blocks from a host tier) plus those it computes first.
  virtual bool can_admit_prefix(const PrefixKey& key, std::int64_t tokens,
                                std::int64_t final_tokens) const {
    (void)key;
    return can_admit(tokens, final_tokens);
  }
  virtual PrefixAdmission admit_prefix(const PrefixKey& key, std::int64_t tokens,
                                       std::int64_t final_tokens) {
    return {admit(key.sequence, tokens, final_tokens), 0};
  }
  // A step completed: the sequence's first `computed_tokens` tokens are in the cache, and
  // its full blocks among them may now be hit by later look-ups.
  virtual void commit_computed(std::int64_t sequence, std::int64_t computed_tokens) {
    (void)sequence;
    (void)computed_tokens;
  }

  // The decode-round fast path (see decode_round_allocator.h), for an allocator that
  // implements it; nullptr otherwise.
  virtual IDecodeRoundAllocator* decode_rounds() { return nullptr; }
};

}  // namespace servesim
