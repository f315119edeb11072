#pragma once

#include <vector>

#include "sim/workload/length_distribution.h"

namespace servesim {

// Uniform draws, with replacement, from recorded (prompt, output) pairs: keeps the joint shape
// (and the correlation) of a real dataset without fitting it.
class EmpiricalLengths final : public ILengthDistribution {
 public:
  // `pairs` must not be empty.
  explicit EmpiricalLengths(std::vector<LengthPair> pairs);
  LengthPair sample(Rng& rng) override;

 private:
  std::vector<LengthPair> pairs_;
};

}  // namespace servesim
