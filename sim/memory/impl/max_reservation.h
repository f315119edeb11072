#pragma once

#include <cstdint>

#include "sim/memory/reservation_policy.h"

namespace servesim {

// Orca's "Max" baseline: every sequence reserves the longest sequence the model serves,
// since the serving system does not know how long the output will be.
class MaxReservation final : public IReservationPolicy {
 public:
  // `max_len_tokens`: the model's maximum sequence length (or --max-len).
  explicit MaxReservation(std::int64_t max_len_tokens);

  std::int64_t reservation_tokens(std::int64_t prompt_tokens,
                                  std::int64_t output_tokens) const override;
  std::int64_t smallest_reservation_tokens(std::int64_t final_tokens) const override;
  std::int64_t largest_reservation_tokens(std::int64_t final_tokens) const override;

 private:
  std::int64_t max_len_tokens_;
};

}  // namespace servesim
