#include "sim/memory/impl/constant_reservation.h"

#include "sim/core/error.h"

namespace servesim {

ConstantReservation::ConstantReservation(std::int64_t tokens, const std::string& key)
    : tokens_(tokens) {
  if (tokens <= 0) {
    throw InputError(key, "expected a positive number of tokens, got " + std::to_string(tokens));
  }
}

}  // namespace servesim
