#pragma once

#include <vector>

#include <pybind11/pybind11.h>
#include <nlohmann/json.hpp>

#include "sim/metrics/record_columns.h"

namespace servesim::python {

namespace py = pybind11;

// A Python value as JSON: None, bool, int, float, str, dict (str keys), list and tuple, and
// anything with __index__ or __float__ (numpy scalars). A float that is not finite becomes
// the string "inf" or "-inf", as servesim's configuration writes an unbounded rate; NaN and
// other types are a UsageError naming `where`.
nlohmann::json to_json(py::handle value, const std::string& where);

// JSON as Python: dicts, lists, str, int, float, bool, None (also for a double that is not
// finite, which a JSON document holds as null).
py::object to_python(const nlohmann::json& value);

// A numpy float64 array of the values.
py::object float_array(const std::vector<double>& values);

// A pandas DataFrame of the columns, in order: int64 and float64 columns as numpy arrays,
// text columns of str and None.
py::object data_frame(const std::vector<ColumnValues>& columns);

}  // namespace servesim::python
