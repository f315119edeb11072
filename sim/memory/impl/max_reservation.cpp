#include "sim/memory/impl/max_reservation.h"

#include <string>

#include "sim/core/error.h"

namespace servesim {

MaxReservation::MaxReservation(std::int64_t max_len_tokens) : max_len_tokens_(max_len_tokens) {
  if (max_len_tokens <= 0) {
    throw InputError("max_len",
                     "expected a positive number of tokens, got " + std::to_string(max_len_tokens));
  }
}

std::int64_t MaxReservation::reservation_tokens(std::int64_t /*prompt_tokens*/,
                                                std::int64_t /*output_tokens*/) const {
  return max_len_tokens_;
}

std::int64_t MaxReservation::smallest_reservation_tokens(std::int64_t /*final_tokens*/) const {
  return max_len_tokens_;
}

std::int64_t MaxReservation::largest_reservation_tokens(std::int64_t /*final_tokens*/) const {
  return max_len_tokens_;
}

}  // namespace servesim
