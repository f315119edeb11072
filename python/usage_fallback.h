#pragma once

#include <pybind11/pybind11.h>

namespace servesim::python {

namespace py = pybind11;

// Wraps the module function `name` (already bound) so that arguments its signature does not
// take raise servesim.UsageError naming what did not fit, in place of pybind11's TypeError. An
// unknown keyword gets the nearest parameter names ("did you mean"); a value of the wrong type, or
// a missing required one, the function's signature. The parameters are read from that signature.
void add_usage_fallback(py::module_& module, const char* name);

}  // namespace servesim::python
