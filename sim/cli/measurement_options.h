#pragma once

#include "sim/calibration/measurement_sources.h"
#include "sim/cli/options.h"

namespace servesim::cli {

// --measurements FILE_OR_DIR..., --vidur DIR and --device NAME, shared by calibrate and
// validate.
void add_measurement_options(po::options_description& options);
// The measurements those options name, loaded.
LoadedMeasurements measurements_from_options(const po::variables_map& vm);

}  // namespace servesim::cli
