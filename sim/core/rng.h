#pragma once

#include <cstdint>
#include <string_view>

namespace servesim {

// A random stream with its own state, and the distributions servesim draws from, written out
// here rather than taken from <random>: the standard fixes the engines but not the
// distributions, so a run would not reproduce across standard libraries.
class Rng {
 public:
  explicit Rng(std::uint64_t seed);

  std::uint64_t next_u64();
  double uniform();  // [0, 1)
  double uniform(double low, double high);
  std::int64_t uniform_int(std::int64_t low, std::int64_t high);  // inclusive bounds
  double exponential(double rate);
  double normal(double mean, double stddev);
  double lognormal(double mu, double sigma);  // parameters of the underlying normal
  double gamma(double shape, double scale);

 private:
  std::uint64_t state_[4];
};

// Independent streams derived from one run seed by name ("arrivals", "lengths", "router"), so
// that adding a draw to one component does not shift the numbers another one sees.
class RngStreams {
 public:
  explicit RngStreams(std::uint64_t seed) : seed_(seed) {}
  Rng stream(std::string_view name) const;
  std::uint64_t seed() const { return seed_; }

 private:
  std::uint64_t seed_;
};

}  // namespace servesim
