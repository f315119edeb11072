#pragma once

// What servesim.capacity's modes share (python/capacity.cpp for the rate and replica searches,
// python/capacity_layouts.cpp for the layout search): its options read, its frames built.

#include <array>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <pybind11/pybind11.h>
#include <nlohmann/json.hpp>

#include "python/capacity.h"
#include "sim/app/app.h"
#include "sim/study/capacity_search.h"
#include "sim/study/point_executor.h"
#include "sim/study/replica_search.h"
#include "sim/study/serving_prices.h"
#include "sim/study/slo.h"

namespace servesim::python {

// The search the module runs: the CLI's points and measures, no progress, no journal.
CapacitySearch python_search(const ConfigSources& base, const SloTarget& slo,
                             IPointExecutor& executor, const std::filesystem::path& data_root);

py::list slo_texts(const SloTarget& slo);
// The verdict's violations joined with "; ", empty when there are none (the frames' convention).
std::string violations_joined(const SloVerdict& verdict);

// The prices' keys, and a price's value, None when there is no price.
extern const std::array<const char*, 6> kPriceKeys;
py::object price_value(const std::optional<ServingPrices>& prices, const char* key);

// The error band edges an answer's frame row carries: ttft_band_low, ttft_band_high,
// tpot_band_low, tpot_band_high (measured / predicted - 1), and their values for a summary
// (None without an answer or a band).
extern const std::array<const char*, 4> kBandEdgeKeys;
std::vector<std::pair<std::string, py::object>> band_edges(const nlohmann::json* summary);

// "h100-sxm", "h100-sxm:2", "h100-sxm:2:1", ("h100-sxm", 2) or ("h100-sxm", 2, 1).
ReplicaShape shape_of(const py::handle& item);
// `target_rate`, checked.
double target_rate(const CapacityOptions& options);
// `shapes`: one shape or a list of them; empty when None.
std::vector<ReplicaShape> shapes_of(const CapacityOptions& options);
// The configured shape when none is given.
void default_shape(std::vector<ReplicaShape>& shapes, const nlohmann::json& config);

// A frame of named columns, in the order given.
py::object named_frame(const std::vector<std::pair<const char*, py::list>>& columns);
// A cell of a column of optional numbers: None where there is none.
py::object number_or_none(bool has, double value);

}  // namespace servesim::python
