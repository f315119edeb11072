#pragma once

#include <cstdint>

#include "sim/memory/reservation_policy.h"

namespace servesim {

// A reservation of a given size, whatever the sequence: for what-if studies of a reservation
// shorter than the model's maximum (sequences longer than it are refused).
class FixedReservation final : public IReservationPolicy {
 public:
  explicit FixedReservation(std::int64_t reservation_tokens);

  std::int64_t reservation_tokens(std::int64_t prompt_tokens,
                                  std::int64_t output_tokens) const override;
  std::int64_t smallest_reservation_tokens(std::int64_t final_tokens) const override;
  std::int64_t largest_reservation_tokens(std::int64_t final_tokens) const override;

 private:
  std::int64_t reservation_tokens_;
};

}  // namespace servesim
