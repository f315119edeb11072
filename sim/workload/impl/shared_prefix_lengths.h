#pragma once

#include "sim/workload/length_distribution.h"
#include "sim/workload/shared_prefix.h"

namespace servesim {

// Every request is one system prompt plus a question: prompt = system_prompt_tokens +
// question_tokens, output = output_tokens. The lengths do not depend on the group, so no draw
// is made; the i-th pair drawn is request i's, whose group is shared_prefix_group
// (shared_prefix.h) and whose content is its group's system prompt (shared_prefix_content).
class SharedPrefixLengths final : public ILengthDistribution {
 public:
  explicit SharedPrefixLengths(const SharedPrefixSpec& spec);
  LengthPair sample(Rng& rng) override;
  std::shared_ptr<const TokenContent> last_content() const override { return content_; }

 private:
  SharedPrefixSpec spec_;
  LengthPair lengths_;
  std::int64_t drawn_ = 0;  // pairs drawn so far: the next one is request drawn_'s
  std::shared_ptr<const TokenContent> content_;
};

}  // namespace servesim
