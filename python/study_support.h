#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <pybind11/pybind11.h>
#include <nlohmann/json.hpp>

#include "sim/study/point_executor.h"

namespace servesim::python {

namespace py = pybind11;

// What servesim.sweep and servesim.capacity share: the executor of `jobs` threads (UsageError
// below 1), and their DataFrames.
std::unique_ptr<IPointExecutor> executor_for(int jobs);

// A list of values from a Python sequence (list, tuple, range, numpy array); a string is a
// value, not a sequence of characters. UsageError naming `where` else.
std::vector<nlohmann::json> values_of(const py::handle& values, const std::string& where);

// Columns for the summaries' metrics, after the columns already in `data`, named by
// summary_columns: counts (integers wherever a point has them) as pandas' nullable Int64, so
// that a point without one (<NA>) does not turn the others into floats; the rest float64,
// NaN where a point has none.
void add_metric_columns(py::dict& data, py::list& names,
                        const std::vector<const nlohmann::json*>& summaries);

// pandas.DataFrame(data, columns=names).
py::object frame(const py::dict& data, const py::list& names);

// The frame of a study's points: `columns` (name, values), in order, then the summaries'
// metric columns (add_metric_columns).
py::object points_frame(const std::vector<std::pair<const char*, py::list>>& columns,
                        const std::vector<const nlohmann::json*>& summaries);

}  // namespace servesim::python
