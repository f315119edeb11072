#pragma once

#include <cstdint>

#include "sim/memory/reservation_policy.h"

namespace servesim {

// Orca's "Pow2" baseline: the prompt plus the true output length rounded up to a power of
// two, an oracle that only knows the output's order of magnitude. Re-admitted after a
// preemption, a sequence reserves its tokens so far plus its remaining output rounded up.
class Pow2Reservation final : public IReservationPolicy {
 public:
  std::int64_t reservation_tokens(std::int64_t prompt_tokens,
                                  std::int64_t output_tokens) const override;
  std::int64_t smallest_reservation_tokens(std::int64_t final_tokens) const override;
  std::int64_t largest_reservation_tokens(std::int64_t final_tokens) const override;
};

}  // namespace servesim
