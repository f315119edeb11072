#pragma once

#include "sim/workload/length_distribution.h"
#include "sim/workload/token_count_sampler.h"

namespace servesim {

// Prompt and output drawn independently, each from its own per-dimension distribution.
class IndependentLengths final : public ILengthDistribution {
 public:
  IndependentLengths(const TokenCountSpec& prompt, const TokenCountSpec& output);
  LengthPair sample(Rng& rng) override;

 private:
  TokenCountSampler prompt_;
  TokenCountSampler output_;
};

}  // namespace servesim
