#pragma once

#include "sim/app/config_assembly.h"
#include "sim/cli/options.h"

namespace servesim::cli {

// The options that describe one serving run (configuration file, --set, and the convenience
// flags that each set one configuration key), shared by `run` and `compare`.
void add_run_options(po::options_description& options);

// The configuration sources those options name, in the order they apply.
ConfigSources run_config_sources(const po::variables_map& vm);

}  // namespace servesim::cli
