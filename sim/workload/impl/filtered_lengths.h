#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "sim/workload/length_distribution.h"

namespace servesim {

// Draws again until a pair fits the limits, as the vLLM benchmark drops ShareGPT pairs with a
// prompt over 1024 or a total over 2048 tokens: the kept pairs follow the conditional
// distribution instead of piling up at the limit as clipping would.
class FilteredLengths final : public ILengthDistribution {
 public:
  // `where` names the spec in the error raised when kMaxRejections draws in a row fail.
  FilteredLengths(std::unique_ptr<ILengthDistribution> inner,
                  std::optional<std::int64_t> max_prompt_tokens,
                  std::optional<std::int64_t> max_total_tokens, std::string where);
  LengthPair sample(Rng& rng) override;
  std::optional<std::int64_t> capacity() const override { return inner_->capacity(); }
  // The content of the pair kept, the last one the inner distribution drew.
  std::shared_ptr<const TokenContent> last_content() const override {
    return inner_->last_content();
  }

  static constexpr int kMaxRejections = 1000;

 private:
  std::unique_ptr<ILengthDistribution> inner_;
  std::optional<std::int64_t> max_prompt_tokens_;
  std::optional<std::int64_t> max_total_tokens_;
  std::string where_;
};

}  // namespace servesim
