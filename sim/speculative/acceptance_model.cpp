#include "sim/speculative/acceptance_model.h"

#include <utility>

#include "sim/core/error.h"

namespace servesim {

AcceptanceModel::AcceptanceModel(std::vector<double> rates, Rng rng)
    : rates_(std::move(rates)), rng_(rng) {
  if (rates_.empty()) throw InvariantError("an acceptance model needs at least one rate");
}

std::int64_t AcceptanceModel::draw(std::int64_t proposed) {
  std::int64_t accepted = 0;
  while (accepted < proposed && rng_.uniform() < rate(accepted))
    ++accepted;
  return accepted;
}

double AcceptanceModel::expected_tokens_per_step(std::int64_t proposed) const {
  double tokens = 1;  // the bonus token, always emitted
  double all_before = 1;
  for (std::int64_t i = 0; i < proposed; ++i) {
    all_before *= rate(i);
    tokens += all_before;
  }
  return tokens;
}

}  // namespace servesim
