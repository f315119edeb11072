#pragma once

#include <cstddef>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/study/point_executor.h"

namespace servesim {

// A point's result or the error it raised, as one JSON value that can cross threads and
// processes: {"result": ...} or {"error": {"kind": K, "message": "..."}}.
nlohmann::json capture_point(const PointEvaluation& point, std::size_t index);

// The results of captured points in order; rethrows the error of the first failed one.
std::vector<nlohmann::json> unwrap_points(std::vector<nlohmann::json> outcomes);

}  // namespace servesim
