#pragma once

#include <cstdint>
#include <string>

#include "sim/memory/reservation_policy.h"

namespace servesim {

// A reservation of one size whatever the sequence, the shape the `max` and `fixed` policies
// share; a sequence longer than it is refused by the allocator.
class ConstantReservation : public IReservationPolicy {
 public:
  std::int64_t reservation_tokens(std::int64_t /*prompt_tokens*/,
                                  std::int64_t /*output_tokens*/) const final {
    return tokens_;
  }
  std::int64_t smallest_reservation_tokens(std::int64_t /*final_tokens*/) const final {
    return tokens_;
  }
  std::int64_t largest_reservation_tokens(std::int64_t /*final_tokens*/) const final {
    return tokens_;
  }

 protected:
  // `key`: the configuration key the size came from, for the error when it is not positive.
  ConstantReservation(std::int64_t tokens, const std::string& key);

 private:
  std::int64_t tokens_;
};

}  // namespace servesim
