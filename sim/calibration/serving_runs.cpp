#include "sim/calibration/serving_runs.h"

#include <map>
#include <string>
#include <tuple>
#include <utility>

#include "sim/calibration/serving_fields.h"
#include "sim/core/error.h"

namespace servesim {

using serving_fields::in_quotes;

std::vector<ServingRun> group_serving_runs(std::vector<ServingPoint> points) {
  std::vector<ServingRun> runs;
  // Load stages of one model, hardware, TP and workload, by stage number.
  std::map<std::tuple<std::string, std::string, std::int64_t, std::string>,
           std::vector<ServingPoint>>
      stages;
  std::vector<
      std::pair<std::size_t, std::tuple<std::string, std::string, std::int64_t, std::string>>>
      order;  // first row of each group, to keep the file's order
  std::vector<std::pair<std::size_t, ServingRun>> singles;
  for (ServingPoint& p : points) {
    if (const auto* s = std::get_if<LoadStage>(&p.workload)) {
      auto key = std::make_tuple(p.model_name, p.hardware, p.tp, s->workload);
      auto& group = stages[key];
      if (group.empty()) order.emplace_back(p.row, key);
      group.push_back(std::move(p));
    } else {
      const std::size_t row = p.row;
      singles.emplace_back(row, ServingRun{{std::move(p)}});
    }
  }
  std::vector<std::pair<std::size_t, ServingRun>> ordered = std::move(singles);
  // A run is placed at its earliest row.
  const auto earliest_row = [](const ServingRun& run) {
    std::size_t row = run.points.front().row;
    for (const ServingPoint& q : run.points)
      row = std::min(row, q.row);
    return row;
  };
  for (const auto& entry : order) {
    const auto& key = entry.second;
    auto& group = stages[key];
    std::stable_sort(group.begin(), group.end(), [](const ServingPoint& a, const ServingPoint& b) {
      return std::get<LoadStage>(a.workload).stage < std::get<LoadStage>(b.workload).stage;
    });
    ServingRun run;
    for (ServingPoint& p : group) {
      const auto& s = std::get<LoadStage>(p.workload);
      if (!run.points.empty()) {
        const ServingPoint& before = run.points.back();
        const auto& b = std::get<LoadStage>(before.workload);
        if (b.stage == s.stage) {
          throw InputError(p.where(), "stage " + std::to_string(s.stage) + " of workload " +
                                          in_quotes(s.workload) + " appears twice (also " +
                                          before.where() + ")");
        }
        if (b.stage + 1 != s.stage) {
          // Not back to back: a run of its own, from an empty server.
          ordered.emplace_back(earliest_row(run), std::move(run));
          run = ServingRun{};
        } else if (before.pp != p.pp || before.engine != p.engine || !(before.knobs == p.knobs) ||
                   b.groups != s.groups || b.users_per_group != s.users_per_group ||
                   b.system_prompt_tokens != s.system_prompt_tokens ||
                   b.ignore_eos != s.ignore_eos ||
                   (s.ignore_eos && b.output_tokens_requested != s.output_tokens_requested)) {
          throw InputError(p.where(), "stage " + std::to_string(s.stage) + " of workload " +
                                          in_quotes(s.workload) + " runs back to back with " +
                                          before.where() +
                                          " but differs from it in pp, engine, knobs, groups, "
                                          "users_per_group, system_prompt_tokens or, under "
                                          "ignore_eos, output_tokens_requested");
        }
      }
      run.points.push_back(std::move(p));
    }
    ordered.emplace_back(earliest_row(run), std::move(run));
  }
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [row, run] : ordered)
    runs.push_back(std::move(run));
  return runs;
}

}  // namespace servesim
