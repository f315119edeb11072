#include "sim/workload/impl/independent_lengths.h"

namespace servesim {

IndependentLengths::IndependentLengths(const TokenCountSpec& prompt, const TokenCountSpec& output)
    : prompt_(prompt), output_(output) {}

LengthPair IndependentLengths::sample(Rng& rng) {
  const std::int64_t prompt_tokens = prompt_.sample(rng);  // prompt first: a fixed draw order
  return {prompt_tokens, output_.sample(rng)};
}

}  // namespace servesim
