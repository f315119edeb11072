#include "sim/workload/impl/shared_prefix_lengths.h"

namespace servesim {

SharedPrefixLengths::SharedPrefixLengths(const SharedPrefixSpec& spec)
    : spec_(spec), lengths_{spec.prompt_tokens(), spec.output_tokens} {}

LengthPair SharedPrefixLengths::sample(Rng& /*rng*/) {
  content_ = std::make_shared<const TokenContent>(shared_prefix_content(spec_, drawn_++));
  return lengths_;
}

}  // namespace servesim
