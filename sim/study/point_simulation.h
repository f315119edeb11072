#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/app/app.h"
#include "sim/study/point_executor.h"

namespace servesim {

// The complete configuration of one study point: the study's sources with the point's
// overrides applied last. Checked strictly (unknown keys, bad values) before it is returned;
// errors are prefixed with `point_name` ("grid point 3 (rate=4)").
nlohmann::json study_point_config(const ConfigSources& base,
                                  const std::vector<ConfigOverride>& point_overrides,
                                  const std::filesystem::path& data_root,
                                  const std::string& point_name);

// Runs one point with per-request and per-iteration records off (a study keeps summaries
// only) and returns its summary.json content, plus the steady-state throughputs under
// "steady_state" when `steady_state` is set. A point that cannot be served (an
// InfeasibleError: the model does not fit, every request is rejected) returns
// {"does_not_fit": REASON} instead, so that a study reports it and goes on. Other errors
// are prefixed with `point_name`.
nlohmann::json simulate_summary(nlohmann::json config, const std::filesystem::path& data_root,
                                const std::filesystem::path& working_dir,
                                const std::string& point_name, bool steady_state = false);

// The points of a study, each the study's sources with its overrides (named by `names`,
// one per point): checks every configuration (study_point_config), then simulates them on
// `executor` (simulate_summary) and returns their results in order.
std::vector<nlohmann::json> simulate_points(
    const ConfigSources& base, const std::vector<std::vector<ConfigOverride>>& point_overrides,
    const std::vector<std::string>& names, IPointExecutor& executor,
    const std::filesystem::path& data_root, const std::filesystem::path& working_dir,
    ProgressMeter* progress, bool steady_state = false);

// The reason a point's result (simulate_summary's) does not fit, if it does not.
std::optional<std::string> does_not_fit(const nlohmann::json& point_result);

}  // namespace servesim
