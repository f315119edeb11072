#include "sim/memory/impl/oracle_reservation.h"

namespace servesim {

std::int64_t OracleReservation::reservation_tokens(std::int64_t prompt_tokens,
                                                   std::int64_t output_tokens) const {
  return prompt_tokens + output_tokens;
}

std::int64_t OracleReservation::smallest_reservation_tokens(std::int64_t final_tokens) const {
  return final_tokens;
}

std::int64_t OracleReservation::largest_reservation_tokens(std::int64_t final_tokens) const {
  return final_tokens;
}

}  // namespace servesim
