#include "sim/core/rng.h"

#include <cmath>
#include <numbers>

namespace servesim {
namespace {

std::uint64_t splitmix64(std::uint64_t& x) {
  std::uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::uint64_t rotl(std::uint64_t x, int k) {
  return (x << k) | (x >> (64 - k));
}

}  // namespace

Rng::Rng(std::uint64_t seed) {
  for (auto& word : state_)
    word = splitmix64(seed);
}

// xoshiro256** (Blackman and Vigna): fast, 256-bit state, passes BigCrush.
std::uint64_t Rng::next_u64() {
  const std::uint64_t result = rotl(state_[1] * 5, 7) * 9;
  const std::uint64_t t = state_[1] << 17;
  state_[2] ^= state_[0];
  state_[3] ^= state_[1];
  state_[1] ^= state_[2];
  state_[0] ^= state_[3];
  state_[2] ^= t;
  state_[3] = rotl(state_[3], 45);
  return result;
}

double Rng::uniform() {
  return static_cast<double>(next_u64() >> 11) * 0x1.0p-53;
}

double Rng::uniform(double low, double high) {
  return low + (high - low) * uniform();
}

std::int64_t Rng::uniform_int(std::int64_t low, std::int64_t high) {
  const auto span = static_cast<std::uint64_t>(high - low) + 1;
  if (span == 0) return static_cast<std::int64_t>(next_u64());  // the full 64-bit range
  // Rejection keeps every value equally likely.
  const std::uint64_t limit = UINT64_MAX - UINT64_MAX % span;
  std::uint64_t draw = next_u64();
  while (draw >= limit)
    draw = next_u64();
  return low + static_cast<std::int64_t>(draw % span);
}

double Rng::exponential(double rate) {
  return -std::log1p(-uniform()) / rate;
}

double Rng::normal(double mean, double stddev) {
  // Box-Muller; one of the pair is discarded to keep the stream stateless between calls.
  const double u1 = 1.0 - uniform();  // (0, 1]
  const double u2 = uniform();
  return mean + stddev * std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

double Rng::lognormal(double mu, double sigma) {
  return std::exp(normal(mu, sigma));
}

double Rng::gamma(double shape, double scale) {
  // Marsaglia and Tsang (2000); shapes below 1 use the boost x * U^(1/shape).
  if (shape < 1.0) {
    const double u = 1.0 - uniform();
    return gamma(shape + 1.0, scale) * std::pow(u, 1.0 / shape);
  }
  const double d = shape - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    double x = 0;
    double v = 0;
    do {
      x = normal(0.0, 1.0);
      v = 1.0 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const double u = 1.0 - uniform();
    if (std::log(u) < 0.5 * x * x + d - d * v + d * std::log(v)) return d * v * scale;
  }
}

Rng RngStreams::stream(std::string_view name) const {
  // FNV-1a of the name, mixed with the seed.
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  for (const char c : name) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ULL;
  }
  std::uint64_t mixed = seed_ ^ rotl(hash, 17);
  return Rng(splitmix64(mixed));
}

}  // namespace servesim
