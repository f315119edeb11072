#pragma once

#include <pybind11/pybind11.h>

namespace servesim::python {

namespace py = pybind11;

// What servesim.run returns: the run's outputs as Python objects, built in memory.
struct PyRunResult {
  py::dict summary;          // summary.json's document
  py::object requests;       // requests.csv as a DataFrame; None when records were off
  py::object iterations;     // iterations.csv as a DataFrame; None when records were off
  py::dict resolved_config;  // resolved_config.json's document
  py::dict rejections;       // rejected requests counted by reason, in first-seen order
  std::int64_t kv_capacity_tokens_per_replica = 0;
  std::int64_t events = 0;
};

// servesim.run(config=None, **settings): one serving run, simulated with the GIL released.
// Raises InfeasibleError when every request was rejected, as the CLI exits 4.
PyRunResult run(const py::object& config, const py::kwargs& settings);

}  // namespace servesim::python
