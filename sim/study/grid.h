#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/app/app.h"

namespace servesim {

// One swept configuration key and the values it takes, in the order given.
struct GridAxis {
  std::string name;  // as the user wrote it: "rate", "scheduler", "workload.arrival.cv"
  std::vector<nlohmann::json> values;
};

// One combination of axis values: the overrides that make its configuration, and the values
// as CSV cells, one per axis.
struct GridPoint {
  std::vector<ConfigOverride> overrides;
  std::vector<nlohmann::json> values;  // one per axis
  std::vector<std::string> labels;     // the values as CSV cells
};

// Parses `--grid KEY=V1,V2,...`. Values read as JSON where they parse (numbers, true,
// {"a": 1}) and as text otherwise; commas inside brackets, braces or quotes do not split.
GridAxis parse_grid_flag(std::string_view text);

// Reads a grid file: {"grid": [{"key": "rate", "values": [1, 2, 4]}, ...]}, axes in order.
std::vector<GridAxis> load_grid_file(const std::filesystem::path& path);

// The configuration overrides that set axis `name` to `value` (the CLI maps short names
// such as "rate" to their keys).
using AxisOverrides = std::function<std::vector<ConfigOverride>(const std::string& name,
                                                                const nlohmann::json& value)>;

// The most points one study grid may have. A point is a whole simulation (a fraction of a
// second to minutes): a million of them is days of CPU, beyond any real sweep, while the
// points' configurations already take memory before the first one runs.
inline constexpr std::size_t kMaxGridPoints = 1'000'000;

// Every combination, the last axis varying fastest. Throws UsageError for an empty grid,
// an axis without values, the same key twice or more than kMaxGridPoints combinations.
std::vector<GridPoint> expand_grid(const std::vector<GridAxis>& axes,
                                   const AxisOverrides& overrides_for);

// A value as a CSV cell and plot label: strings unquoted, anything else as compact JSON.
std::string grid_label(const nlohmann::json& value);

}  // namespace servesim
