#pragma once

#include <cstdint>

namespace servesim {

// How many token slots a contiguous allocator reserves for a sequence at admission. The
// region never grows afterwards, so a reservation below the sequence's final length means
// the sequence can never finish: the allocator refuses it rather than strand it half-way.
// Policies are pure functions of their arguments and hold no per-sequence state.
class IReservationPolicy {
 public:
  virtual ~IReservationPolicy() = default;

  // Slots for a sequence admitted holding `prompt_tokens` (the prompt, or prompt plus the
  // tokens generated before a preemption) that will generate `output_tokens` more.
  virtual std::int64_t reservation_tokens(std::int64_t prompt_tokens,
                                          std::int64_t output_tokens) const = 0;

  // The smallest and largest reservations over every split of `final_tokens` into tokens
  // held at admission and tokens still to come. A preempted sequence is re-admitted with a
  // new split, so a sequence is only accepted if every split covers it and the largest fits:
  // otherwise it could be accepted and then never fit again after a preemption.
  virtual std::int64_t smallest_reservation_tokens(std::int64_t final_tokens) const = 0;
  virtual std::int64_t largest_reservation_tokens(std::int64_t final_tokens) const = 0;
};

}  // namespace servesim
