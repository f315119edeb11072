#include "sim/study/sweep_run.h"

#include <string>

#include "sim/study/point_simulation.h"

namespace servesim {
namespace {

std::string point_name(std::size_t index, const std::vector<GridAxis>& axes,
                       const GridPoint& point) {
  std::string name = "grid point " + std::to_string(index) + " (";
  for (std::size_t a = 0; a < axes.size(); ++a)
    name += (a == 0 ? "" : ", ") + axes[a].name + "=" + point.labels[a];
  return name + ")";
}

}  // namespace

SweepResult run_sweep(const ConfigSources& base, const std::vector<GridAxis>& axes,
                      const AxisOverrides& overrides_for, IPointExecutor& executor,
                      const std::filesystem::path& data_root,
                      const std::filesystem::path& working_dir, ProgressMeter* progress,
                      PointJournal* journal) {
  const auto points = expand_grid(axes, overrides_for);
  std::vector<std::vector<ConfigOverride>> overrides;
  std::vector<std::string> names;
  for (std::size_t i = 0; i < points.size(); ++i) {
    overrides.push_back(points[i].overrides);
    names.push_back(point_name(i, axes, points[i]));
  }
  const auto summaries = simulate_points(base, overrides, names, executor, data_root, working_dir,
                                         progress, PointMeasure{true, 0, {}}, journal);

  SweepResult sweep;
  for (const auto& axis : axes)
    sweep.axes.push_back(axis.name);
  for (std::size_t i = 0; i < points.size(); ++i) {
    sweep.rows.push_back(SweepRow{points[i].labels, points[i].values, summaries[i]});
  }
  return sweep;
}

}  // namespace servesim
