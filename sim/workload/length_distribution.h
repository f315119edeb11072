#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "sim/core/rng.h"
#include "sim/workload/token_content.h"

namespace servesim {

// The two lengths that define a request's work; both are at least 1 token.
struct LengthPair {
  std::int64_t prompt_tokens = 1;
  std::int64_t output_tokens = 1;
  bool operator==(const LengthPair&) const = default;
};

// Draws (prompt, output) pairs. Joint so that correlated sources (empirical pairs, traces)
// keep their correlation; independent per-dimension distributions are one implementation.
class ILengthDistribution {
 public:
  virtual ~ILengthDistribution() = default;
  // The next pair. Random draws come from `rng`, the caller's "lengths" stream.
  virtual LengthPair sample(Rng& rng) = 0;
  // The most pairs this distribution can ever produce (a trace's rows); nullopt if unlimited.
  // The workload source stops when it is reached.
  virtual std::optional<std::int64_t> capacity() const { return std::nullopt; }
  // What the pair sample() returned last is made of (token_content.h), for a prefix cache;
  // nullptr when the distribution does not say (the tokens are the request's own).
  virtual std::shared_ptr<const TokenContent> last_content() const { return nullptr; }
};

}  // namespace servesim
