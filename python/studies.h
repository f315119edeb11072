#pragma once

#include <cstdint>
#include <optional>

#include <pybind11/pybind11.h>

namespace servesim::python {

namespace py = pybind11;

// servesim.sweep: every combination of the grid's axes ({name: [values]}, the last varying
// fastest), as `servesim sweep`, returned as sweep.csv's DataFrame.
py::object sweep(const py::object& config, const py::dict& grid, int jobs,
                 const py::kwargs& settings);

}  // namespace servesim::python
