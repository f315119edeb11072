#include "sim/workload/impl/empirical_lengths.h"

#include "sim/core/error.h"

namespace servesim {

EmpiricalLengths::EmpiricalLengths(std::vector<LengthPair> pairs) : pairs_(std::move(pairs)) {
  if (pairs_.empty()) throw InvariantError("EmpiricalLengths needs at least one pair");
}

LengthPair EmpiricalLengths::sample(Rng& rng) {
  const auto last = static_cast<std::int64_t>(pairs_.size()) - 1;
  return pairs_[static_cast<std::size_t>(rng.uniform_int(0, last))];
}

}  // namespace servesim
