#pragma once

#include <cstdint>

#include "sim/memory/impl/constant_reservation.h"

namespace servesim {

// Orca's "Max" baseline: every sequence reserves the longest sequence the model serves,
// since the serving system does not know how long the output will be.
class MaxReservation final : public ConstantReservation {
 public:
  // `max_len_tokens`: the model's maximum sequence length (or --max-len).
  explicit MaxReservation(std::int64_t max_len_tokens)
      : ConstantReservation(max_len_tokens, "max_len") {}
};

}  // namespace servesim
