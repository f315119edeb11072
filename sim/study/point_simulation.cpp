#include "sim/study/point_simulation.h"

#include <algorithm>

#include "sim/app/app.h"
#include "sim/config/run_config.h"
#include "sim/core/error.h"
#include "sim/core/rng.h"
#include "sim/study/progress_meter.h"
#include "sim/workload/workload_spec.h"

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

void check_point_inputs(const nlohmann::json& config, const std::filesystem::path& data_root,
                        const std::filesystem::path& working_dir, const std::string& point_name) {
  try {
    const RunConfig run = run_config_from_json(config, "configuration", policy_menus());
    check_simulation_limits(run);
    (void)startup_verdict(config, data_root);  // loads the model and hardware profiles
    const WorkloadSpec workload = parse_workload_spec(run.workload, "workload", working_dir);
    (void)make_workload_source(workload, RngStreams(run.seed));
  } catch (const InfeasibleError&) {
    // Reported as the point's result when it runs.
  } catch (const Error& error) {
    if (error.kind() == ErrorKind::Infeasible) return;
    throw Error(error.kind(), point_name + ": " + error.what());
  }
}

namespace {

// The most requests an adapting run may simulate: the workload's num_requests when its
// arrivals are rate-driven (poisson, gamma, constant, no stages); else nothing (it runs as
// configured).
std::optional<std::int64_t> adaptive_cap(const nlohmann::json& config) {
  const auto& workload = config["workload"];
  if (!workload.is_object() || !workload.contains("num_requests") ||
      !workload["num_requests"].is_number_integer() || !workload.contains("arrival")) {
    return std::nullopt;
  }
  const auto& arrival = workload["arrival"];
  const std::string process = arrival.value("process", "");
  if ((process != "poisson" && process != "gamma" && process != "constant") ||
      arrival.contains("stages")) {
    return std::nullopt;
  }
  return workload["num_requests"].get<std::int64_t>();
}

}  // namespace

nlohmann::json simulate_summary(nlohmann::json config, const std::filesystem::path& data_root,
                                const std::filesystem::path& working_dir,
                                const std::string& point_name, const PointMeasure& measure) {
  config["output"]["request_records"] = false;
  config["output"]["iteration_records"] = false;
  const std::optional<std::int64_t> cap =
      measure.steady_state && measure.window_completions > 0 ? adaptive_cap(config) : std::nullopt;
  std::int64_t requests =
      cap ? std::min(*cap, std::max<std::int64_t>(1000, 2 * measure.window_completions)) : 0;
  try {
    while (true) {
      if (cap) config["workload"]["num_requests"] = requests;
      const SimulationOutcome outcome = run_simulation(config, data_root, working_dir);
      require_served(outcome.result);
      nlohmann::json summary = outcome_summary_json(outcome);
      if (!measure.steady_state) return summary;
      const SteadyState steady =
          analyze_steady_state(outcome.result.collector.request_timings(), measure.criteria);
      const bool settled =
          steady.warmup_detected && steady.completions_in_window >= measure.window_completions &&
          !(measure.slo != nullptr && close_call(*measure.slo, summary, measure.close_band));
      const bool overloaded = steady.served_ratio < overloaded_below(steady, measure.criteria);
      if (!cap || settled || overloaded || requests >= *cap) {
        nlohmann::json json = steady_state_json(steady);
        json["requests_simulated"] = outcome.result.collector.request_timings().size();
        json["settled"] = settled;
        summary["steady_state"] = std::move(json);
        return summary;
      }
      requests = std::min(*cap, 2 * requests);
    }
  } catch (const InfeasibleError& error) {
    return unfit_result(error);
  } catch (const Error& error) {
    if (error.kind() == ErrorKind::Infeasible) return {{"does_not_fit", error.what()}};
    throw Error(error.kind(), point_name + ": " + error.what());
  }
}

std::vector<nlohmann::json> simulate_points(
    const ConfigSources& base, const std::vector<std::vector<ConfigOverride>>& point_overrides,
    const std::vector<std::string>& names, IPointExecutor& executor,
    const std::filesystem::path& data_root, const std::filesystem::path& working_dir,
    ProgressMeter* progress, const PointMeasure& measure, PointJournal* journal) {
  std::vector<nlohmann::json> configs;
  std::vector<std::string> keys;
  for (std::size_t i = 0; i < point_overrides.size(); ++i) {
    configs.push_back(study_point_config(base, point_overrides[i], data_root, names[i]));
    keys.push_back(PointJournal::key("point", configs.back()));
  }
  for (std::size_t i = 0; i < configs.size(); ++i)
    check_point_inputs(configs[i], data_root, working_dir, names[i]);
  if (progress != nullptr) progress->expect(configs.size());
  return evaluate_journaled(
      executor, keys,
      [&](std::size_t i) {
        return simulate_summary(configs[i], data_root, working_dir, names[i], measure);
      },
      progress, journal);
}

std::vector<nlohmann::json> evaluate_journaled(IPointExecutor& executor,
                                               const std::vector<std::string>& keys,
                                               const PointEvaluation& evaluate,
                                               ProgressMeter* progress, PointJournal* journal) {
  auto results = executor.evaluate(
      keys.size(),
      [&](std::size_t i) {
        if (journal != nullptr) {
          if (auto done = journal->find(keys[i])) return std::move(*done);
        }
        nlohmann::json result = evaluate(i);
        if (journal != nullptr) journal->record(keys[i], result);
        return result;
      },
      progress);
  if (journal != nullptr) {
    for (std::size_t i = 0; i < keys.size(); ++i)
      journal->record(keys[i], results[i]);
  }
  return results;
}

std::optional<std::string> unstable(const nlohmann::json& point_result) {
  if (!point_result.is_object() || !point_result.contains("steady_state")) return std::nullopt;
  const auto& steady = point_result["steady_state"];
  if (!steady.contains("unstable")) return std::nullopt;
  return steady["unstable"].get<std::string>();
}

std::optional<std::string> does_not_fit(const nlohmann::json& point_result) {
  if (!point_result.is_object() || !point_result.contains("does_not_fit")) return std::nullopt;
  return point_result["does_not_fit"].get<std::string>();
}

nlohmann::json unfit_result(const InfeasibleError& error) {
  nlohmann::json unfit{{"does_not_fit", error.what()}};
  if (error.refused_start()) unfit["does_not_start"] = true;
  return unfit;
}

std::string unfit_text(const nlohmann::json& point_result) {
  const std::string reason = does_not_fit(point_result).value_or("");
  if (point_result.value("does_not_start", false)) {
    // The engine's message reads "ENGINE does not start: WHY"; the row names the engine
    // after the reason.
    const std::string marker = " does not start: ";
    const std::size_t at = reason.find(marker);
    if (at != std::string::npos) {
      return "does not start: " + reason.substr(at + marker.size()) + " (" + reason.substr(0, at) +
             ")";
    }
    return "does not start: " + reason;
  }
  return "does not fit: " + reason;
}

}  // namespace servesim
