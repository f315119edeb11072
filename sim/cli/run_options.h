#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "sim/app/config_assembly.h"
#include "sim/cli/options.h"

namespace servesim::cli {

// The options that describe one serving run (configuration file, --set, and the convenience
// flags that each set one configuration key), shared by `run` and `compare`.
void add_run_options(po::options_description& options);

// The configuration key a convenience flag sets ("rate" -> "workload.arrival.rate_per_s"),
// given without dashes; nothing when `flag` is not one.
std::optional<std::string> config_key_for_flag(std::string_view flag);

// The configuration sources those options name, in the order they apply.
ConfigSources run_config_sources(const po::variables_map& vm);

}  // namespace servesim::cli
