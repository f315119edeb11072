#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include <pybind11/pybind11.h>

namespace servesim::python {

namespace py = pybind11;

// The search parameters of servesim.capacity, as `servesim capacity` takes them.
struct CapacityOptions {
  py::object slo;  // {"ttft_p99": 0.5, ...}, or terms "ttft_p99=0.5"
  std::optional<double> target_rate_per_s;
  py::object shapes;  // with a target rate: ["h100-sxm:2", ("a100-80gb", 4, 1), ...] or None
  std::optional<double> start_rate_per_s;
  double precision = 0.02;
  std::size_t points_per_round = 3;
  std::size_t max_points = 200;
  double min_rate_per_s = 1e-4;
  double max_rate_per_s = 1e6;
  std::int64_t max_replicas = 1024;
  // USD per GPU-hour for the prices (default each hardware profile's list price).
  std::optional<double> gpu_cost_per_hour;
  // With a target rate: also every prefill/decode pair of the shapes (capacity
  // --disaggregated), ranked by "gpus" or "cost".
  bool disaggregated = false;
  std::string minimize = "gpus";
  // "prediction" or "upper" (capacity --plan-at): latencies judged as predicted or at their
  // error bands' upper edge.
  std::string plan_at = "prediction";
  int jobs = 1;
};

// servesim.capacity: the highest rate meeting the SLO, or with a target rate the fewest
// replicas of each shape; a dict with every point simulated as a DataFrame.
py::dict capacity(const py::object& config, const CapacityOptions& options,
                  const py::kwargs& settings);

}  // namespace servesim::python
