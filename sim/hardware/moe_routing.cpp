#include "sim/hardware/moe_routing.h"

#include <algorithm>
#include <cmath>

namespace servesim {
namespace {

// Below this mean the tail sums are exact (a few dozen terms of the probability mass function);
// above it the normal approximation with continuity correction is within 1e-3 of the exact
// expectation for the block sizes kernels use.
constexpr double kExactMean = 30;

}  // namespace

double expected_row_tiles(double n, double p, double block_m) noexcept {
  if (!(n >= 1) || !(p > 0) || !(block_m > 0)) return 0;
  if (p >= 1) return std::ceil(n / block_m);
  // sum_x P(X = x) ceil(x / block_m) over x within 12 standard deviations (and 12 tokens) of
  // the mean, the mass function stepped out from the mode (started from its logarithm, so that
  // large batches do not underflow): at most a few hundred terms for a step's tokens.
  const double mean = n * p;
  const double spread = 12 * std::sqrt(n * p * (1 - p)) + 12;
  const double low = std::max(0.0, std::floor(mean - spread));
  const double high = std::min(std::floor(n), std::ceil(mean + spread));
  const double mode = std::clamp(std::floor((n + 1) * p), low, high);
  const double odds = p / (1 - p);
  const double at_mode =
      std::exp(std::lgamma(n + 1) - std::lgamma(mode + 1) - std::lgamma(n - mode + 1) +
               mode * std::log(p) + (n - mode) * std::log1p(-p));
  double tiles = at_mode * std::ceil(mode / block_m);
  double mass = at_mode;
  for (double x = mode; x < high; ++x) {
    mass *= (n - x) / (x + 1) * odds;
    tiles += mass * std::ceil((x + 1) / block_m);
  }
  mass = at_mode;
  for (double x = mode; x > low; --x) {
    mass *= x / (n - x + 1) / odds;
    tiles += mass * std::ceil((x - 1) / block_m);
  }
  return tiles;
}

MoeRouting route_tokens(double tokens, double p, double local_experts, double block_m) noexcept {
  MoeRouting r;
  if (!(tokens > 0) || !(p > 0)) return r;
  const double q = std::min(p, 1.0);
  const double touched = 1 - std::pow(1 - q, tokens);
  r.experts_touched = local_experts * touched;
  r.tokens_per_expert = tokens * q / touched;
  r.row_tiles = local_experts * expected_row_tiles(tokens, q, block_m);
  return r;
}

}  // namespace servesim
