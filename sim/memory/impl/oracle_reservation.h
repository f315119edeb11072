#pragma once

#include <cstdint>

#include "sim/memory/reservation_policy.h"

namespace servesim {

// Orca's "Oracle" baseline: the serving system is told the true output length and reserves
// exactly the final length, the best any up-front reservation can do.
class OracleReservation final : public IReservationPolicy {
 public:
  std::int64_t reservation_tokens(std::int64_t prompt_tokens,
                                  std::int64_t output_tokens) const override;
  std::int64_t smallest_reservation_tokens(std::int64_t final_tokens) const override;
  std::int64_t largest_reservation_tokens(std::int64_t final_tokens) const override;
};

}  // namespace servesim
