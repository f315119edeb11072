#include "python/studies.h"

#include <filesystem>
#include <string>
#include <vector>

#include "python/conversions.h"
#include "python/settings.h"
#include "python/study_support.h"
#include "sim/study/point_simulation.h"
#include "sim/study/sweep_run.h"

namespace servesim::python {

py::object sweep(const py::object& config, const py::dict& grid, int jobs,
                 const py::kwargs& settings) {
  const ConfigSources base = config_sources(config, settings);
  std::vector<GridAxis> axes;
  for (const auto& [key, values] : grid) {
    const std::string name = py::str(key).cast<std::string>();
    axes.push_back({name, values_of(values, "grid " + name)});
  }
  const std::filesystem::path root = data_root();
  const std::filesystem::path working_dir = std::filesystem::current_path();
  const auto executor = executor_for(jobs);
  SweepResult result;
  {
    const py::gil_scoped_release release;
    result = run_sweep(base, axes, python_axis_overrides(), *executor, root, working_dir, nullptr);
  }

  py::dict data;
  py::list names;
  py::list points;
  for (std::size_t i = 0; i < result.rows.size(); ++i)
    points.append(i);
  data["point"] = points;
  names.append("point");
  for (std::size_t a = 0; a < result.axes.size(); ++a) {
    py::list column;
    for (const auto& row : result.rows)
      column.append(to_python(row.values[a]));
    data[py::str(result.axes[a])] = column;
    names.append(result.axes[a]);
  }
  std::vector<const nlohmann::json*> summaries;
  bool any_unfit = false;
  for (const auto& row : result.rows) {
    summaries.push_back(&row.summary);
    any_unfit = any_unfit || does_not_fit(row.summary).has_value();
  }
  add_metric_columns(data, names, summaries);
  if (any_unfit) {
    py::list column;
    for (const auto& row : result.rows) {
      const auto reason = does_not_fit(row.summary);
      column.append(reason ? py::object(py::str(*reason)) : py::object(py::none()));
    }
    data["does_not_fit"] = column;
    names.append("does_not_fit");
  }
  return frame(data, names);
}

}  // namespace servesim::python
