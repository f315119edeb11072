#pragma once

#include <cstdint>

#include "sim/memory/impl/constant_reservation.h"

namespace servesim {

// A reservation of a given size, whatever the sequence: for what-if studies of a reservation
// shorter than the model's maximum (sequences longer than it are refused).
class FixedReservation final : public ConstantReservation {
 public:
  explicit FixedReservation(std::int64_t reservation_tokens)
      : ConstantReservation(reservation_tokens, "allocator.fixed_reservation_tokens") {}
};

}  // namespace servesim
