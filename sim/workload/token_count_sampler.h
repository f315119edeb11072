#pragma once

#include <cstdint>

#include "sim/core/rng.h"
#include "sim/workload/workload_spec.h"

namespace servesim {

// Draws one token count (a prompt or an output length) from a TokenCountSpec: fixed, uniform
// over inclusive integers, or normal / lognormal rounded to whole tokens and clipped to
// [min, max]. Clipping rather than redrawing keeps a draw to a fixed number of random numbers.
class TokenCountSampler final {
 public:
  explicit TokenCountSampler(const TokenCountSpec& spec);
  std::int64_t sample(Rng& rng) const;

 private:
  TokenCountSpec spec_;
};

}  // namespace servesim
