#pragma once

#include <pybind11/pybind11.h>

namespace servesim::python {

namespace py = pybind11;

// Adds servesim.Error and its subclasses UsageError, InputError, InfeasibleError and
// InternalError (one per servesim::ErrorKind, sim/core/error.h) to `module`, and translates a
// servesim::Error escaping a binding into the class of its kind, with servesim's one-line
// message as str(e) and the attributes `kind` ("usage", "input", "infeasible", "internal")
// and `exit_code` (the CLI's exit code for it).
void add_error_classes(py::module_& module);

}  // namespace servesim::python
