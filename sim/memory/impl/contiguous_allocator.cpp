#include "sim/memory/impl/contiguous_allocator.h"

#include <algorithm>
#include <string>
#include <utility>

#include "sim/core/error.h"

namespace servesim {

ContiguousAllocator::ContiguousAllocator(std::unique_ptr<IReservationPolicy> reservation,
                                         std::unique_ptr<IAddressSpace> address_space)
    : reservation_(std::move(reservation)), space_(std::move(address_space)) {
  if (!reservation_ || !space_) {
    throw InvariantError("contiguous allocator: built without a reservation policy or space");
  }
}

const ContiguousAllocator::Held& ContiguousAllocator::held(std::int64_t sequence) const {
  return held_.at(sequence, "contiguous allocator");
}

bool ContiguousAllocator::fits_when_empty(std::int64_t final_tokens) const {
  return final_tokens > 0 &&
         reservation_->smallest_reservation_tokens(final_tokens) >= final_tokens &&
         reservation_->largest_reservation_tokens(final_tokens) <=
             space_->largest_free_tokens_when_empty();
}

std::int64_t ContiguousAllocator::admission_reservation(std::int64_t tokens,
                                                        std::int64_t final_tokens) const {
  if (tokens < 0 || final_tokens <= 0 || tokens > final_tokens) return 0;
  const std::int64_t reservation = reservation_->reservation_tokens(tokens, final_tokens - tokens);
  return reservation >= final_tokens ? reservation : 0;
}

bool ContiguousAllocator::can_admit(std::int64_t tokens, std::int64_t final_tokens) const {
  const std::int64_t reservation = admission_reservation(tokens, final_tokens);
  return reservation > 0 && reservation <= space_->largest_free_tokens();
}

std::int64_t ContiguousAllocator::admit(std::int64_t sequence, std::int64_t tokens,
                                        std::int64_t final_tokens) {
  if (held_.contains(sequence))
    throw_sequence_error("contiguous allocator", sequence, "admitted twice");
  const std::int64_t reservation = admission_reservation(tokens, final_tokens);
  const auto region = reservation > 0 ? space_->allocate(reservation) : std::nullopt;
  if (!region) {
    throw InvariantError("contiguous allocator: admitted sequence " + std::to_string(sequence) +
                         " (" + std::to_string(tokens) + " of " + std::to_string(final_tokens) +
                         " tokens) without room");
  }
  const Held h{*region, tokens, final_tokens};
  *held_.emplace(sequence) = h;
  allocated_tokens_ += region->size_tokens;
  account(h, 1);
  check_conservation();
  return 0;
}

bool ContiguousAllocator::can_grow(std::int64_t sequence, std::int64_t tokens) const {
  const Held& h = held(sequence);
  return tokens >= 0 && h.tokens + tokens <= h.region.size_tokens;
}

void ContiguousAllocator::grow(std::int64_t sequence, std::int64_t tokens) {
  if (!can_grow(sequence, tokens)) {
    throw InvariantError("kv_within_capacity",
                         "contiguous allocator: KV region exceeded growing sequence " +
                             std::to_string(sequence) + " by " + std::to_string(tokens) +
                             " tokens");
  }
  Held& h = held(sequence);
  account(h, -1);
  h.tokens += tokens;
  account(h, 1);
  check_conservation();
}

void ContiguousAllocator::release(std::int64_t sequence) {
  const Held h = held(sequence);
  space_->free(h.region);
  allocated_tokens_ -= h.region.size_tokens;
  account(h, -1);
  held_.erase(sequence);
  check_conservation();
}

// A sequence that outgrows its final length (allowed while its region lasts) just has
// nothing left to fill.
void ContiguousAllocator::account(const Held& h, std::int64_t sign) {
  const std::int64_t filled_at_end = std::max(h.final_tokens, h.tokens);
  token_states_ += sign * h.tokens;
  reserved_ += sign * (filled_at_end - h.tokens);
  internal_fragmentation_ += sign * (h.region.size_tokens - filled_at_end);
}

void ContiguousAllocator::check_conservation() const {
  const bool conserved = allocated_tokens_ + space_->free_tokens() == space_->capacity_tokens() &&
                         token_states_ + reserved_ + internal_fragmentation_ == allocated_tokens_ &&
                         token_states_ >= 0 && reserved_ >= 0 && internal_fragmentation_ >= 0 &&
                         space_->free_tokens() >= 0;
  if (!conserved) {
    throw InvariantError("blocks_conserved",
                         "contiguous allocator: slots not conserved (" +
                             std::to_string(allocated_tokens_) + " allocated + " +
                             std::to_string(space_->free_tokens()) +
                             " free != " + std::to_string(space_->capacity_tokens()) + ")");
  }
}

std::int64_t ContiguousAllocator::decode_rounds_available(std::span<const std::int64_t> sequences,
                                                          std::int64_t max_rounds) const {
  std::int64_t rounds = max_rounds;
  for (const std::int64_t sequence : sequences) {
    const Held& h = held(sequence);
    rounds = std::min({rounds, h.region.size_tokens - h.tokens, h.final_tokens - h.tokens});
  }
  return std::max<std::int64_t>(rounds, 0);
}

void ContiguousAllocator::grow_decode_rounds(std::span<const std::int64_t> sequences,
                                             std::int64_t next_final_tokens,
                                             std::span<KvUsage> usages) {
  const auto rounds = static_cast<std::int64_t>(usages.size());
  if (rounds > decode_rounds_available(sequences, rounds)) {
    throw InvariantError("kv_within_capacity",
                         "contiguous allocator: decode rounds past a region or final length");
  }
  const auto count = static_cast<std::int64_t>(sequences.size());
  KvUsage u = usage(next_final_tokens);
  for (KvUsage& after_round : usages) {
    u.token_states += count;
    u.reserved -= count;
    after_round = u;
  }
  for (const std::int64_t sequence : sequences)
    held(sequence).tokens += rounds;
  token_states_ += rounds * count;
  reserved_ -= rounds * count;
  check_conservation();
}

KvUsage ContiguousAllocator::usage(std::int64_t next_final_tokens) const {
  KvUsage u;
  u.capacity_tokens = capacity_tokens();
  u.token_states = token_states_;
  u.reserved = reserved_;
  u.internal_fragmentation = internal_fragmentation_;
  if (next_final_tokens > 0) {
    const std::int64_t next_reservation = reservation_->reservation_tokens(0, next_final_tokens);
    u.external_fragmentation = space_->free_tokens_in_holes_below(next_reservation);
  }
  u.free = space_->free_tokens() - u.external_fragmentation;
  return u;
}

}  // namespace servesim
