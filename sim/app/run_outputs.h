#pragma once

#include <filesystem>

#include "sim/app/simulation.h"

namespace servesim {

// Writes summary.json, requests.csv, iterations.csv and resolved_config.json of one run.
void write_run_outputs(const SimulationOutcome& outcome, const std::filesystem::path& dir);

}  // namespace servesim
