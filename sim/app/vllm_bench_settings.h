#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/app/config_assembly.h"

namespace servesim {

// vllm bench serve's workload flags, as the configuration overrides servesim's own flags make
// (vLLM's vllm/benchmarks/serve.py and datasets.py). Each setting is named by how messages
// name it (`origin`, "--burstiness" or "burstiness").

// --burstiness B: vLLM draws its gaps from a gamma distribution of shape B (mean 1 / rate),
// the Poisson process at B = 1: `--arrival poisson` for B = 1, else `--arrival gamma --cv
// 1/sqrt(B)` (a gamma's coefficient of variation is 1 / sqrt(shape)). B must be > 0.
std::vector<ConfigOverride> burstiness_overrides(const std::string& origin, double burstiness);

// --dataset-name random with --random-input-len I (vLLM's default 1024), --random-output-len O
// (128) and --random-range-ratio R (0, in [0, 1)): independent lengths drawn uniformly from
// the whole numbers in [floor(I (1 - R)), ceil(I (1 + R))] and [max(1, floor(O (1 - R))),
// max(1, ceil(O (1 + R)))], fixed lengths when a range is one number (the same lengths as
// --prompt-tokens I --output-tokens O for R = 0). `origin` names --dataset-name.
struct RandomDataset {
  std::optional<std::int64_t> input_len;
  std::optional<std::int64_t> output_len;
  std::optional<double> range_ratio;
};
ConfigOverride random_dataset_override(const std::string& origin, const RandomDataset& dataset,
                                       const std::string& ratio_origin);

// The datasets servesim has: "random" and "sharegpt" (its preset); any other is a usage error
// naming them and what to give instead.
void check_dataset_name(const std::string& origin, const std::string& name);

}  // namespace servesim
