#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "sim/calibration/serving_point.h"
#include "sim/calibration/serving_run_config.h"
#include "sim/calibration/serving_runs.h"
#include "sim/cli/command.h"
#include "sim/cli/options.h"

namespace servesim::cli {

// The options that read measured serving points, shared by validate and calibrate:
// --measured, --setup, --engine and --max-requests-per-point (and --hw, which each command
// declares with its own meaning).
void add_serving_point_options(po::options_description& options);

struct LoadedServingRuns {
  std::vector<ServingRun> runs;  // the points, grouped into runs (stages back to back)
  std::vector<std::string> files;
  std::size_t points = 0;
  ServingRunOptions run_options;
};

// Reads every --measured file with the setup, hardware and engine options and checks that
// every point maps to a run configuration, before anything is simulated.
LoadedServingRuns load_serving_runs(const po::variables_map& vm, const CommandContext& context);

// Writes `text` to `path` through a temporary file beside it, so that `path` is either the
// whole new file or what it was before.
void write_atomically(const std::filesystem::path& path, const std::string& text);

}  // namespace servesim::cli
