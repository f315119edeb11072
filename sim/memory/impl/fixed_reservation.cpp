#include "sim/memory/impl/fixed_reservation.h"

#include <string>

#include "sim/core/error.h"

namespace servesim {

FixedReservation::FixedReservation(std::int64_t reservation_tokens)
    : reservation_tokens_(reservation_tokens) {
  if (reservation_tokens <= 0) {
    throw InputError(
        "allocator.fixed_reservation_tokens",
        "expected a positive number of tokens, got " + std::to_string(reservation_tokens));
  }
}

std::int64_t FixedReservation::reservation_tokens(std::int64_t /*prompt_tokens*/,
                                                  std::int64_t /*output_tokens*/) const {
  return reservation_tokens_;
}

std::int64_t FixedReservation::smallest_reservation_tokens(std::int64_t /*final_tokens*/) const {
  return reservation_tokens_;
}

std::int64_t FixedReservation::largest_reservation_tokens(std::int64_t /*final_tokens*/) const {
  return reservation_tokens_;
}

}  // namespace servesim
