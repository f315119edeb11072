#include "sim/workload/token_count_sampler.h"

#include <algorithm>
#include <cmath>

#include "sim/workload/lognormal.h"

namespace servesim {

TokenCountSampler::TokenCountSampler(const TokenCountSpec& spec) : spec_(spec) {}

std::int64_t TokenCountSampler::sample(Rng& rng) const {
  // Clip in floating point first: a lognormal tail can exceed the range of an integer.
  const auto clip = [this](double tokens) {
    const double clipped = std::clamp(std::round(tokens), static_cast<double>(spec_.min_tokens),
                                      static_cast<double>(spec_.max_tokens));
    return static_cast<std::int64_t>(clipped);
  };
  switch (spec_.distribution) {
    case TokenCountKind::Fixed:
      return spec_.tokens;
    case TokenCountKind::Uniform:
      return rng.uniform_int(spec_.min_tokens, spec_.max_tokens);
    case TokenCountKind::Normal:
      return clip(rng.normal(spec_.mean_tokens, spec_.std_tokens));
    case TokenCountKind::Lognormal:
      return clip(lognormal_with_mean(rng, spec_.mean_tokens, spec_.std_tokens));
  }
  return spec_.tokens;
}

}  // namespace servesim
