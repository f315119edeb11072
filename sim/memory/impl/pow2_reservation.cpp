#include "sim/memory/impl/pow2_reservation.h"

#include <bit>
#include <cstdint>

namespace servesim {

namespace {

// A sequence with nothing left to generate needs no room to grow into.
std::int64_t round_up_to_power_of_two(std::int64_t tokens) {
  if (tokens <= 0) return 0;
  return static_cast<std::int64_t>(std::bit_ceil(static_cast<std::uint64_t>(tokens)));
}

}  // namespace

std::int64_t Pow2Reservation::reservation_tokens(std::int64_t prompt_tokens,
                                                 std::int64_t output_tokens) const {
  return prompt_tokens + round_up_to_power_of_two(output_tokens);
}

std::int64_t Pow2Reservation::smallest_reservation_tokens(std::int64_t final_tokens) const {
  return final_tokens;
}

// The rounding is worst for a remaining output just past a power of two: 2^k + 1 rounds up
// by 2^k - 1, and the largest such 2^k + 1 not above final_tokens gives the largest waste.
std::int64_t Pow2Reservation::largest_reservation_tokens(std::int64_t final_tokens) const {
  if (final_tokens <= 2) return final_tokens;
  const auto below = std::bit_floor(static_cast<std::uint64_t>(final_tokens - 1));
  return final_tokens - 1 + static_cast<std::int64_t>(below);
}

}  // namespace servesim
