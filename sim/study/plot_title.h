#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/app/app.h"

namespace servesim {

// The title of a study's figures, naming what was held fixed: "model llama-3-8b, hardware
// h100-sxm (TP 1), engine vllm, workload sharegpt". `document` is the assembled configuration
// (assemble_config) of `sources`; the workload is named as it was given (a preset's name, a
// trace file's name, or "custom" for an inline spec). A part that `varied_axes` (a sweep's
// axes: "model", "hw", "engine", "workload", ...) changes from point to point is left out:
// the legend names it.
std::string plot_title(const nlohmann::json& document, const ConfigSources& sources,
                       const std::vector<std::string>& varied_axes = {});

}  // namespace servesim
