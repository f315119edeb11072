#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "sim/app/config_assembly.h"
#include "sim/cli/options.h"

namespace servesim::cli {

// The options that describe one serving run (configuration file, --set, and the convenience
// flags that each set one configuration key), shared by `run` and `compare`.
void add_run_options(po::options_description& options);

// The configuration key a convenience flag sets ("rate" -> "workload.arrival.rate_per_s"),
// given without dashes (vLLM's names too); nothing when `flag` is not one.
std::optional<std::string> config_key_for_flag(std::string_view flag);
// The value that key takes for the flag's `value`: vLLM's value names translated
// (--kv-cache-dtype fp8_e4m3 -> "fp8"), any other value as it is.
nlohmann::json config_value_for_flag(std::string_view flag, const nlohmann::json& value);

// The configuration sources those options name, in the order they apply.
ConfigSources run_config_sources(const po::variables_map& vm);

}  // namespace servesim::cli
