#include "python/conversions.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <variant>

#include <pybind11/numpy.h>

#include "sim/core/error.h"

namespace servesim::python {

nlohmann::json to_json(py::handle value, const std::string& where) {
  if (value.is_none()) return nullptr;
  // bool before int: True is an int in Python.
  if (py::isinstance<py::bool_>(value)) return value.cast<bool>();
  if (py::isinstance<py::int_>(value)) {
    if (value.cast<py::int_>() < py::int_(0)) return value.cast<std::int64_t>();
    return value.cast<std::uint64_t>();
  }
  if (py::isinstance<py::float_>(value)) {
    const double number = value.cast<double>();
    if (std::isnan(number)) throw UsageError(where + ": NaN is not a value");
    if (std::isinf(number)) return number > 0 ? "inf" : "-inf";
    return number;
  }
  if (py::isinstance<py::str>(value)) return value.cast<std::string>();
  if (py::isinstance<py::dict>(value)) {
    nlohmann::json object = nlohmann::json::object();
    for (const auto& [key, item] : value.cast<py::dict>()) {
      if (!py::isinstance<py::str>(key)) {
        throw UsageError(where + ": dictionary keys must be strings, got " +
                         py::repr(key).cast<std::string>());
      }
      const std::string name = key.cast<std::string>();
      object[name] = to_json(item, where + "." + name);
    }
    return object;
  }
  if (py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value)) {
    nlohmann::json array = nlohmann::json::array();
    for (const auto& item : value)
      array.push_back(to_json(item, where));
    return array;
  }
  // numpy scalars and other numbers: integers first, so that numpy.int64(4) stays 4.
  if (py::hasattr(value, "__index__")) {
    return to_json(py::reinterpret_steal<py::object>(PyNumber_Index(value.ptr())), where);
  }
  if (py::hasattr(value, "__float__")) {
    return to_json(py::float_(py::reinterpret_borrow<py::object>(value)), where);
  }
  throw UsageError(where + ": expected a number, string, bool, None, list or dict, got " +
                   py::repr(value).cast<std::string>());
}

py::object to_python(const nlohmann::json& value) {
  switch (value.type()) {
    case nlohmann::json::value_t::null:
    case nlohmann::json::value_t::discarded:
      return py::none();
    case nlohmann::json::value_t::boolean:
      return py::bool_(value.get<bool>());
    case nlohmann::json::value_t::number_integer:
      return py::int_(value.get<std::int64_t>());
    case nlohmann::json::value_t::number_unsigned:
      return py::int_(value.get<std::uint64_t>());
    case nlohmann::json::value_t::number_float: {
      // As the JSON document would hold it: a value that is not finite is null there.
      const double number = value.get<double>();
      return std::isfinite(number) ? py::object(py::float_(number)) : py::object(py::none());
    }
    case nlohmann::json::value_t::string:
      return py::str(value.get<std::string>());
    case nlohmann::json::value_t::array: {
      py::list list;
      for (const auto& item : value)
        list.append(to_python(item));
      return list;
    }
    case nlohmann::json::value_t::object: {
      py::dict dict;
      for (const auto& [key, item] : value.items())
        dict[py::str(key)] = to_python(item);
      return dict;
    }
    case nlohmann::json::value_t::binary:
      break;
  }
  throw InvariantError("a JSON value servesim does not write (binary)");
}

namespace {

template <class T>
py::array_t<T> numpy_array(const std::vector<T>& values) {
  py::array_t<T> array(static_cast<py::ssize_t>(values.size()));
  std::copy(values.begin(), values.end(), array.mutable_data());
  return array;
}

py::object column_object(const ColumnValues& column) {
  if (const auto* integers = std::get_if<std::vector<std::int64_t>>(&column.values)) {
    return numpy_array(*integers);
  }
  if (const auto* reals = std::get_if<std::vector<double>>(&column.values)) {
    return numpy_array(*reals);
  }
  py::list texts;
  for (const auto& text : std::get<std::vector<std::optional<std::string>>>(column.values)) {
    if (text) {
      texts.append(py::str(*text));
    } else {
      texts.append(py::none());
    }
  }
  return texts;
}

}  // namespace

py::object float_array(const std::vector<double>& values) {
  return numpy_array(values);
}

py::object data_frame(const std::vector<ColumnValues>& columns) {
  py::dict data;
  py::list names;
  for (const auto& column : columns) {
    data[py::str(column.name)] = column_object(column);
    names.append(py::str(column.name));
  }
  return py::module_::import("pandas").attr("DataFrame")(data, py::arg("columns") = names);
}

}  // namespace servesim::python
