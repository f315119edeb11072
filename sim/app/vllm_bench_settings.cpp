#include "sim/app/vllm_bench_settings.h"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "sim/core/error.h"

namespace servesim {
namespace {

constexpr std::int64_t kDefaultInputTokens = 1024;  // vLLM's --random-input-len default
constexpr std::int64_t kDefaultOutputTokens = 128;  // --random-output-len
constexpr double kDefaultRangeRatio = 0.0;          // --random-range-ratio

// The lengths of one dimension: fixed when the range is one number, else uniform over it.
nlohmann::json token_range(std::int64_t low, std::int64_t high) {
  if (low == high) return {{"distribution", "fixed"}, {"tokens", low}};
  return {{"distribution", "uniform"}, {"min", low}, {"max", high}};
}

}  // namespace

std::vector<ConfigOverride> burstiness_overrides(const std::string& origin, double burstiness) {
  if (!std::isfinite(burstiness) || !(burstiness > 0)) {
    throw InputError(origin,
                     "expected a number > 0 (1: Poisson arrivals; below 1 burstier, "
                     "above 1 more even), got " +
                         nlohmann::json(burstiness).dump());
  }
  if (burstiness == 1) return {{origin, "workload.arrival.process=\"poisson\""}};
  return {{origin, "workload.arrival.process=\"gamma\""},
          {origin, "workload.arrival.cv=" + nlohmann::json(1 / std::sqrt(burstiness)).dump()}};
}

ConfigOverride random_dataset_override(const std::string& origin, const RandomDataset& dataset,
                                       const std::string& ratio_origin) {
  const double ratio = dataset.range_ratio.value_or(kDefaultRangeRatio);
  if (!(ratio >= 0 && ratio < 1)) {
    throw InputError(ratio_origin,
                     "expected a ratio in [0, 1), got " + nlohmann::json(ratio).dump());
  }
  const auto input = static_cast<double>(dataset.input_len.value_or(kDefaultInputTokens));
  const auto output = static_cast<double>(dataset.output_len.value_or(kDefaultOutputTokens));
  const auto input_low = static_cast<std::int64_t>(std::floor(input * (1 - ratio)));
  const auto input_high = static_cast<std::int64_t>(std::ceil(input * (1 + ratio)));
  const auto output_low =
      std::max<std::int64_t>(1, static_cast<std::int64_t>(std::floor(output * (1 - ratio))));
  const auto output_high =
      std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(output * (1 + ratio))));
  if (input_low < 1) {
    throw InputError(origin, "random prompts of " + std::to_string(input_low) +
                                 " tokens at the least: raise --random-input-len or lower "
                                 "--random-range-ratio (prompts need a token)");
  }
  const nlohmann::json lengths = {{"distribution", "independent"},
                                  {"prompt", token_range(input_low, input_high)},
                                  {"output", token_range(output_low, output_high)}};
  return {origin, "workload.lengths=" + lengths.dump()};
}

void check_dataset_name(const std::string& origin, const std::string& name) {
  if (name == "random" || name == "sharegpt") return;
  throw UsageError(origin + ": \"" + name +
                   "\" is not a dataset servesim has (random, sharegpt); for others give their "
                   "lengths as a trace or workload spec with --workload FILE");
}

}  // namespace servesim
