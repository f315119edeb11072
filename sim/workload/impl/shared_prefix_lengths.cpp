#include "sim/workload/impl/shared_prefix_lengths.h"

namespace servesim {

SharedPrefixLengths::SharedPrefixLengths(const SharedPrefixSpec& spec)
    : lengths_{spec.prompt_tokens(), spec.output_tokens} {}

LengthPair SharedPrefixLengths::sample(Rng& /*rng*/) {
  return lengths_;
}

}  // namespace servesim
