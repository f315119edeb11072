#pragma once

#include "sim/workload/length_distribution.h"
#include "sim/workload/shared_prefix.h"

namespace servesim {

// Every request is one system prompt plus a question: prompt = system_prompt_tokens +
// question_tokens, output = output_tokens. The lengths do not depend on the group, so no draw
// is made; which group request i belongs to is shared_prefix_group (shared_prefix.h). Until a
// prefix cache exists the shared system prompt is computed like any other prompt tokens.
class SharedPrefixLengths final : public ILengthDistribution {
 public:
  explicit SharedPrefixLengths(const SharedPrefixSpec& spec);
  LengthPair sample(Rng& rng) override;

 private:
  LengthPair lengths_;
};

}  // namespace servesim
