#include "sim/app/run_error_bands.h"

#include "sim/core/json_reader.h"
#include "sim/metrics/summary_json.h"

namespace servesim {

std::string band_model_family(const ModelSpec& model) {
  if (model.mla) return "mla";
  return model.is_moe() ? "moe" : "dense";
}

std::string band_engine_name(const std::string& engine) {
  const std::filesystem::path path(engine);
  return path.has_parent_path() || path.extension() == ".json" ? path.stem().string() : engine;
}

ErrorBands load_error_bands(const std::filesystem::path& data_root, const std::string& engine) {
  const std::filesystem::path file =
      data_root / "engines" / "bands" / (band_engine_name(engine) + ".json");
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) return {};
  return ErrorBands::from_json(read_json_file(file), file.string());
}

BandLookup run_error_bands(const std::filesystem::path& data_root, DeploymentClass deployment,
                           const RunSummary& summary) {
  const double in_flight = summary.throughput_requests_per_s * summary.e2e_s.mean;
  deployment.regime = load_regime(in_flight);
  return load_error_bands(data_root, deployment.engine).band_for(deployment, in_flight);
}

nlohmann::json outcome_summary_json(const SimulationOutcome& outcome) {
  nlohmann::json summary = summary_to_json(outcome.result.summary);
  summary["error_bands"] = band_lookup_to_json(outcome.error_bands);
  return summary;
}

}  // namespace servesim
