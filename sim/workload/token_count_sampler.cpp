#include "sim/workload/token_count_sampler.h"

#include <algorithm>
#include <cmath>

namespace servesim {

TokenCountSampler::TokenCountSampler(const TokenCountSpec& spec) : spec_(spec) {
  if (spec_.distribution == TokenCountKind::Lognormal) {
    // For X = exp(N(mu, sigma^2)): E[X] = exp(mu + sigma^2 / 2), CV^2 = exp(sigma^2) - 1.
    const double cv = spec_.std_tokens / spec_.mean_tokens;
    const double variance = std::log1p(cv * cv);
    log_sigma_ = std::sqrt(variance);
    log_mu_ = std::log(spec_.mean_tokens) - variance / 2;
  }
}

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
      return clip(rng.lognormal(log_mu_, log_sigma_));
  }
  return spec_.tokens;
}

}  // namespace servesim
