#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/app/app.h"
#include "sim/core/error.h"
#include "sim/study/point_executor.h"
#include "sim/study/point_journal.h"
#include "sim/study/slo.h"
#include "sim/study/steady_state.h"

namespace servesim {

// The complete configuration of one study point: the study's sources with the point's
// overrides applied last. Checked strictly (unknown keys, bad values) before it is returned;
// errors are prefixed with `point_name` ("grid point 3 (rate=4)").
nlohmann::json study_point_config(const ConfigSources& base,
                                  const std::vector<ConfigOverride>& point_overrides,
                                  const std::filesystem::path& data_root,
                                  const std::string& point_name);

// Checks what a point's run reads beyond its configuration (which study_point_config
// checks): the model and hardware profiles, the sizes one machine simulates, and the workload
// with its trace or lengths file, read whole as the run reads them. So a study refuses bad
// input before it simulates anything, not at the point that holds it. A point that cannot be
// served is no error here (the study reports it as not fitting). Errors are prefixed with
// `point_name`.
void check_point_inputs(const nlohmann::json& config, const std::filesystem::path& data_root,
                        const std::filesystem::path& working_dir, const std::string& point_name);

// What a study measures of each point besides its summary.
struct PointMeasure {
  // Adds the steady state and its stability verdict under "steady_state" (steady_state.h).
  bool steady_state = false;
  // With steady_state, when positive and the workload has rate-driven arrivals and a
  // num_requests: the run adapts its length. It starts at min(num_requests, max(1000, 2 x
  // window_completions)) requests and doubles, up to num_requests, until the warm-up is
  // detected, at least window_completions requests complete in the window and the SLO is
  // not a close call, or the point serves less than 1 - 2 x served_tolerance of its offered
  // rate (overloaded whatever the length). The summary's steady_state says how many requests ran
  // (requests_simulated) and whether it settled.
  std::int64_t window_completions = 0;
  StabilityCriteria criteria;
  // With an adapting run: a point whose latencies are within close_band of a limit of this
  // target (slo.h's close_call) has not settled either, so that the runs near the answer
  // are the longest.
  const SloTarget* slo = nullptr;
  double close_band = 0.05;
};

// Runs one point with per-request and per-iteration records off (a study keeps summaries
// only) and returns its summary.json content, with what `measure` adds. A point that cannot
// be served (an InfeasibleError: the model does not fit, every request is rejected) returns
// {"does_not_fit": REASON} instead, so that a study reports it and goes on. Other errors
// are prefixed with `point_name`.
nlohmann::json simulate_summary(nlohmann::json config, const std::filesystem::path& data_root,
                                const std::filesystem::path& working_dir,
                                const std::string& point_name, const PointMeasure& measure = {});

// The points of a study, each the study's sources with its overrides (named by `names`,
// one per point): checks every configuration and its inputs (study_point_config,
// check_point_inputs), then simulates them on
// `executor` (simulate_summary) and returns their results in order. With a journal, a point
// it holds is not simulated again, and each point simulated is recorded in it as it
// finishes (an MPI job's other ranks' points once the round is over).
std::vector<nlohmann::json> simulate_points(
    const ConfigSources& base, const std::vector<std::vector<ConfigOverride>>& point_overrides,
    const std::vector<std::string>& names, IPointExecutor& executor,
    const std::filesystem::path& data_root, const std::filesystem::path& working_dir,
    ProgressMeter* progress, const PointMeasure& measure = {}, PointJournal* journal = nullptr);

// Runs `evaluate(i)` for the points 0..keys.size()-1 on `executor`, taking a point's result
// from the journal when it holds its key and recording the others as they finish.
std::vector<nlohmann::json> evaluate_journaled(IPointExecutor& executor,
                                               const std::vector<std::string>& keys,
                                               const PointEvaluation& evaluate,
                                               ProgressMeter* progress, PointJournal* journal);

// Whether a point's result says it is stable (true when it has no verdict), and why not.
std::optional<std::string> unstable(const nlohmann::json& point_result);

// The reason a point's result (simulate_summary's) does not fit, if it does not.
std::optional<std::string> does_not_fit(const nlohmann::json& point_result);

// A point's result when it cannot be served: {"does_not_fit": REASON}, with
// "does_not_start": true when the engine's start-up checks refused it.
nlohmann::json unfit_result(const InfeasibleError& error);

// How a study's row says that a point cannot be served: "does not start: WHY (ENGINE)" when
// the engine refuses to start the deployment (a start-up check), else "does not fit: WHY".
std::string unfit_text(const nlohmann::json& point_result);

}  // namespace servesim
