#pragma once

#include <cstdint>
#include <memory>
#include <utility>

#include "sim/memory/address_space.h"
#include "sim/memory/decode_round_allocator.h"
#include "sim/memory/kv_cache_allocator.h"
#include "sim/memory/reservation_policy.h"
#include "sim/memory/sequence_table.h"

namespace servesim {

// Contiguous KV allocation as before PagedAttention (Orca, FasterTransformer): at admission
// a sequence reserves one region of the address space, sized by the reservation policy and
// placed (and perhaps rounded up) by the address space; it grows only within that region
// and gives all of it back when it finishes or is preempted.
//
// Usage, per sequence with region R, final length F and T tokens held (F <= R always):
// token_states T, reserved F - T (slots it will still fill), internal fragmentation R - F
// (slots it will never fill: reservation slack plus placement rounding). Free slots in holes
// too small for the next request's region are external fragmentation. The next request's
// prompt is not known to `usage`, so its reservation is taken for a prompt of 0 and an
// output of `next_final_tokens` (pow2 rounds its whole length up).
class ContiguousAllocator final : public IKvCacheAllocator, public IDecodeRoundAllocator {
 public:
  ContiguousAllocator(std::unique_ptr<IReservationPolicy> reservation,
                      std::unique_ptr<IAddressSpace> address_space);

  // Every split of `final_tokens` must be covered by its reservation, and the largest
  // reservation must fit the empty address space (see IReservationPolicy).
  bool fits_when_empty(std::int64_t final_tokens) const override;
  bool can_admit(std::int64_t tokens, std::int64_t final_tokens) const override;
  std::int64_t admit(std::int64_t sequence, std::int64_t tokens,
                     std::int64_t final_tokens) override;
  // Within the region only: a sequence is never moved or extended.
  bool can_grow(std::int64_t sequence, std::int64_t tokens) const override;
  void grow(std::int64_t sequence, std::int64_t tokens) override;
  void release(std::int64_t sequence) override;

  KvUsage usage(std::int64_t next_final_tokens) const override;

  IDecodeRoundAllocator* decode_rounds() override { return this; }
  std::size_t grow_each(std::span<const std::int64_t> sequences, std::int64_t tokens) override {
    return grow_each_in_turn(*this, sequences, tokens);
  }
  // Growth stays inside the regions, so the holes do not change: a round moves one slot per
  // sequence from reserved to token states. Rounds stop before any sequence would fill its
  // region or pass its final length.
  std::int64_t decode_rounds_available(std::span<const std::int64_t> sequences,
                                       std::int64_t max_rounds) const override;
  void grow_decode_rounds(std::span<const std::int64_t> sequences, std::int64_t next_final_tokens,
                          std::span<KvUsage> usages) override;
  std::int64_t capacity_tokens() const override { return space_->capacity_tokens(); }
  std::int64_t sequences() const override { return static_cast<std::int64_t>(held_.size()); }

  Region region(std::int64_t sequence) const { return held(sequence).region; }
  const IAddressSpace& address_space() const { return *space_; }

 private:
  struct Held {
    Region region;
    std::int64_t tokens = 0;
    std::int64_t final_tokens = 0;
  };
  // The reservation for an admission, or 0 when the policy's reservation cannot serve it.
  std::int64_t admission_reservation(std::int64_t tokens, std::int64_t final_tokens) const;
  const Held& held(std::int64_t sequence) const;
  Held& held(std::int64_t sequence) {
    return const_cast<Held&>(std::as_const(*this).held(sequence));
  }
  // Adds (sign 1) or removes (sign -1) a sequence's share of the running usage sums.
  void account(const Held& h, std::int64_t sign);
  void check_conservation() const;

  std::unique_ptr<IReservationPolicy> reservation_;
  std::unique_ptr<IAddressSpace> space_;
  SequenceTable<Held> held_;
  // Running sums, so usage() costs O(holes), not O(sequences).
  std::int64_t allocated_tokens_ = 0;
  std::int64_t token_states_ = 0;
  std::int64_t reserved_ = 0;
  std::int64_t internal_fragmentation_ = 0;
};

}  // namespace servesim
