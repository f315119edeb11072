#pragma once

#include "sim/app/app.h"
#include "sim/cli/options.h"

namespace servesim::cli {

// The options that describe one serving run (configuration file, --set, and the convenience
// flags of sim/app/run_flags.h), shared by `run` and `compare`.
void add_run_options(po::options_description& options);

// The configuration sources of the options given on a command line (run_config_sources of
// sim/app/run_settings.h, with the settings named as flags).
ConfigSources run_config_sources(const po::variables_map& vm);

}  // namespace servesim::cli
