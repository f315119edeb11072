#include "python/study_support.h"

#include <cmath>
#include <limits>
#include <string>

#include "python/conversions.h"
#include "sim/core/error.h"
#include "sim/study/summary_columns.h"

namespace servesim::python {
namespace {

// Whether the summary's value at `dotted` ("steady_state.requests_simulated") is a JSON
// integer: a count.
bool is_count(const nlohmann::json& summary, const std::string& dotted) {
  const auto dot = dotted.find('.');
  const std::string key = dotted.substr(0, dot);
  if (!summary.is_object() || !summary.contains(key)) return false;
  const nlohmann::json& node = summary.at(key);
  if (dot == std::string::npos) return node.is_number_integer();
  return is_count(node, dotted.substr(dot + 1));
}

}  // namespace

// A list of values from a Python sequence (list, tuple, range, numpy array); a string is a
// value, not a sequence of characters.
std::vector<nlohmann::json> values_of(const py::handle& values, const std::string& where) {
  if (py::isinstance<py::str>(values) || py::isinstance<py::dict>(values) ||
      !py::hasattr(values, "__iter__")) {
    throw UsageError(where + ": expected a list of values, got " +
                     py::repr(values).cast<std::string>());
  }
  std::vector<nlohmann::json> list;
  for (const auto& item : values)
    list.push_back(to_json(item, where));
  return list;
}

std::unique_ptr<IPointExecutor> executor_for(int jobs) {
  if (jobs < 1) throw UsageError("jobs: expected at least 1, got " + std::to_string(jobs));
  return make_point_executor(jobs, ProcessGroup{});
}

void add_metric_columns(py::dict& data, py::list& names,
                        const std::vector<const nlohmann::json*>& summaries) {
  std::vector<std::string> metrics;
  std::vector<std::vector<std::pair<std::string, double>>> values;
  for (const nlohmann::json* summary : summaries) {
    values.push_back(summary_columns(*summary));
    for (const auto& [name, value] : values.back()) {
      if (std::find(metrics.begin(), metrics.end(), name) == metrics.end()) {
        metrics.push_back(name);
      }
    }
  }
  for (const auto& metric : metrics) {
    std::vector<double> column(summaries.size(), std::numeric_limits<double>::quiet_NaN());
    for (std::size_t i = 0; i < values.size(); ++i) {
      for (const auto& [name, value] : values[i]) {
        if (name == metric) column[i] = value;
      }
    }
    bool counts = true;
    for (std::size_t i = 0; i < summaries.size(); ++i)
      counts = counts && (std::isnan(column[i]) || is_count(*summaries[i], metric));
    if (counts) {
      py::list cells;
      for (const double value : column) {
        cells.append(std::isnan(value) ? py::object(py::none())
                                       : py::object(py::int_(static_cast<long long>(value))));
      }
      data[py::str(metric)] =
          py::module_::import("pandas").attr("array")(cells, py::arg("dtype") = "Int64");
    } else {
      data[py::str(metric)] = float_array(column);
    }
    names.append(py::str(metric));
  }
}

py::object frame(const py::dict& data, const py::list& names) {
  return py::module_::import("pandas").attr("DataFrame")(data, py::arg("columns") = names);
}

py::object points_frame(const std::vector<std::pair<const char*, py::list>>& columns,
                        const std::vector<const nlohmann::json*>& summaries) {
  py::dict data;
  py::list names;
  for (const auto& [name, column] : columns) {
    data[name] = column;
    names.append(name);
  }
  add_metric_columns(data, names, summaries);
  return frame(data, names);
}

}  // namespace servesim::python
