#pragma once

#include <filesystem>
#include <string>

#include <pybind11/pybind11.h>

#include "sim/app/app.h"
#include "sim/study/grid.h"

namespace servesim::python {

namespace py = pybind11;

// The configuration sources of a call: `config` (None for the built-in defaults, a dict with
// the keys of resolved_config.json, or the path of a JSON file), then `settings` in order of
// kind, as the CLI applies its flags: a name that is a run flag's with '_' for '-' (rate,
// num_requests, tp, tensor_parallel_size, prompt_tokens, no_bulk_decode, goodput, ...) sets
// what that flag sets; any other name is a configuration key ("hardware", "seed", or dotted
// such as "workload.arrival.cv"), set like --set after the flags.
ConfigSources config_sources(const py::object& config, const py::dict& settings);

// A grid axis name as the CLI's --grid takes it: a run flag's name with '_' for '-'
// ("num_requests" -> num-requests), anything else as given.
AxisOverrides python_axis_overrides();

// The folder holding models/, hw_profiles/, engines/ and workloads/: $SERVESIM_DATA_DIR when
// set; else <sys.prefix>/share/servesim when the module is installed in that environment
// (`pip install .`); else as for the CLI, beside the module or in the source tree it was
// built from.
std::filesystem::path data_root();

}  // namespace servesim::python
