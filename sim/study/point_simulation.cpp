#include "sim/study/point_simulation.h"

#include "sim/app/app.h"
#include "sim/config/run_config.h"
#include "sim/core/error.h"
#include "sim/metrics/summary_json.h"
#include "sim/study/progress_meter.h"

namespace servesim {

nlohmann::json study_point_config(const ConfigSources& base,
                                  const std::vector<ConfigOverride>& point_overrides,
                                  const std::filesystem::path& data_root,
                                  const std::string& point_name) {
  ConfigSources sources = base;
  sources.overrides.insert(sources.overrides.end(), point_overrides.begin(), point_overrides.end());
  try {
    nlohmann::json config = assemble_config(sources, data_root);
    (void)run_config_from_json(config, "configuration", policy_menus());
    return config;
  } catch (const Error& error) {
    throw Error(error.kind(), point_name + ": " + error.what());
  }
}

nlohmann::json simulate_summary(nlohmann::json config, const std::filesystem::path& data_root,
                                const std::filesystem::path& working_dir,
                                const std::string& point_name, bool steady_state) {
  config["output"]["request_records"] = false;
  config["output"]["iteration_records"] = false;
  try {
    const SimulationOutcome outcome = run_simulation(config, data_root, working_dir);
    require_served(outcome.result);
    nlohmann::json summary = summary_to_json(outcome.result.summary);
    if (steady_state)
      summary["steady_state"] = steady_state_to_json(outcome.result.collector.steady_state());
    return summary;
  } catch (const Error& error) {
    if (error.kind() == ErrorKind::Infeasible) return {{"does_not_fit", error.what()}};
    throw Error(error.kind(), point_name + ": " + error.what());
  }
}

std::vector<nlohmann::json> simulate_points(
    const ConfigSources& base, const std::vector<std::vector<ConfigOverride>>& point_overrides,
    const std::vector<std::string>& names, IPointExecutor& executor,
    const std::filesystem::path& data_root, const std::filesystem::path& working_dir,
    ProgressMeter* progress, bool steady_state) {
  std::vector<nlohmann::json> configs;
  for (std::size_t i = 0; i < point_overrides.size(); ++i)
    configs.push_back(study_point_config(base, point_overrides[i], data_root, names[i]));
  if (progress != nullptr) progress->expect(configs.size());
  return executor.evaluate(
      configs.size(),
      [&](std::size_t i) {
        return simulate_summary(configs[i], data_root, working_dir, names[i], steady_state);
      },
      progress);
}

std::optional<std::string> does_not_fit(const nlohmann::json& point_result) {
  if (!point_result.is_object() || !point_result.contains("does_not_fit")) return std::nullopt;
  return point_result["does_not_fit"].get<std::string>();
}

}  // namespace servesim
