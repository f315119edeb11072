#pragma once

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/app/simulation.h"
#include "sim/metrics/error_bands.h"
#include "sim/metrics/run_summary.h"
#include "sim/model/model_spec.h"

namespace servesim {

// The model family error bands are kept by: "mla" (multi-head latent attention), "moe"
// (routed experts), else "dense".
std::string band_model_family(const ModelSpec& model);

// An engine as bands name it: the profile's name, or the stem of a profile given by path.
std::string band_engine_name(const std::string& engine);

// The shipped bands of one engine profile: <data_root>/engines/bands/<engine>.json, written by
// `servesim validate --measured ... --write-bands`; none (no residuals) where the file is
// absent. A file that cannot be read is an InputError naming it.
ErrorBands load_error_bands(const std::filesystem::path& data_root, const std::string& engine);

// The bands of a run of `deployment` (its regime left empty) that gave `summary`: in the regime
// of its mean number of requests in flight (completed requests per second x mean E2E).
BandLookup run_error_bands(const std::filesystem::path& data_root, DeploymentClass deployment,
                           const RunSummary& summary);

// summary.json's document: summary_to_json of the run, with its "error_bands"
// (band_lookup_to_json).
nlohmann::json outcome_summary_json(const SimulationOutcome& outcome);

}  // namespace servesim
