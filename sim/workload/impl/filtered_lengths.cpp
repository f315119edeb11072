#include "sim/workload/impl/filtered_lengths.h"

#include "sim/core/error.h"

namespace servesim {

FilteredLengths::FilteredLengths(std::unique_ptr<ILengthDistribution> inner,
                                 std::optional<std::int64_t> max_prompt_tokens,
                                 std::optional<std::int64_t> max_total_tokens, std::string where)
    : inner_(std::move(inner)),
      max_prompt_tokens_(max_prompt_tokens),
      max_total_tokens_(max_total_tokens),
      where_(std::move(where)) {}

LengthPair FilteredLengths::sample(Rng& rng) {
  int prompt_rejections = 0;
  int total_rejections = 0;
  while (prompt_rejections + total_rejections < kMaxRejections) {
    const LengthPair pair = inner_->sample(rng);
    if (max_prompt_tokens_ && pair.prompt_tokens > *max_prompt_tokens_) {
      ++prompt_rejections;
    } else if (max_total_tokens_ && pair.prompt_tokens + pair.output_tokens > *max_total_tokens_) {
      ++total_rejections;
    } else {
      return pair;
    }
  }
  const bool prompt_limit = prompt_rejections >= total_rejections;
  const std::string key = prompt_limit ? "lengths.max_prompt_tokens" : "lengths.max_total_tokens";
  const std::int64_t limit = prompt_limit ? *max_prompt_tokens_ : *max_total_tokens_;
  throw InputError(where_, "field \"" + key + "\": " + std::to_string(kMaxRejections) +
                               " length draws in a row exceeded the limit of " +
                               std::to_string(limit) +
                               " tokens; raise it or shorten the length distribution");
}

}  // namespace servesim
