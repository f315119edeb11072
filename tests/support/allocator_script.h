#pragma once

#include <cstdint>
#include <random>

namespace servesim::test {

// The random choices of an allocator test's script. mt19937_64's output is fixed by the
// standard, unlike the distributions, so the script is the same on every platform.
class Script {
 public:
  explicit Script(std::uint64_t seed) : engine_(seed) {}
  std::int64_t below(std::int64_t n) { return static_cast<std::int64_t>(engine_() % n); }
  std::int64_t between(std::int64_t low, std::int64_t high) { return low + below(high - low + 1); }

 private:
  std::mt19937_64 engine_;
};

}  // namespace servesim::test
