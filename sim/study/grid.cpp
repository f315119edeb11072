#include "sim/study/grid.h"

#include <set>

#include "sim/core/error.h"
#include "sim/core/json_reader.h"

namespace servesim {
namespace {

// Splits on commas outside brackets, braces and double quotes.
std::vector<std::string> split_top_level(std::string_view text) {
  std::vector<std::string> parts;
  std::string current;
  int depth = 0;
  bool quoted = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '\\' && i + 1 < text.size()) {
        current += c;
        current += text[++i];
        continue;
      }
      if (c == '"') quoted = false;
    } else if (c == '"') {
      quoted = true;
    } else if (c == '[' || c == '{') {
      ++depth;
    } else if (c == ']' || c == '}') {
      --depth;
    } else if (c == ',' && depth == 0) {
      parts.push_back(current);
      current.clear();
      continue;
    }
    current += c;
  }
  parts.push_back(current);
  return parts;
}

nlohmann::json parse_value(const std::string& text, const std::string& axis) {
  std::optional<nlohmann::json> value = parse_json_if_json(text, "--grid " + axis);
  if (!value) return text;
  return std::move(*value);
}

}  // namespace

GridAxis parse_grid_flag(std::string_view text) {
  const auto equals = text.find('=');
  if (equals == std::string_view::npos || equals == 0) {
    throw UsageError("--grid \"" + std::string(text) + "\": expected KEY=VALUE1,VALUE2,...");
  }
  GridAxis axis{std::string(text.substr(0, equals)), {}};
  const std::string_view values = text.substr(equals + 1);
  if (values.empty()) throw UsageError("--grid " + axis.name + ": no values given");
  for (const auto& part : split_top_level(values)) {
    if (part.empty()) {
      throw UsageError("--grid " + axis.name + ": empty value in \"" + std::string(values) + "\"");
    }
    axis.values.push_back(parse_value(part, axis.name));
  }
  return axis;
}

std::vector<GridAxis> load_grid_file(const std::filesystem::path& path) {
  const nlohmann::json document = read_json_file(path);
  JsonObjectReader root(document, path.string());
  const nlohmann::json* grid = root.optional_raw("grid");
  root.reject_unknown_keys();
  if (grid == nullptr || !grid->is_array() || grid->empty()) {
    root.fail("grid", "expected a non-empty array of {\"key\": ..., \"values\": [...]}");
  }
  std::vector<GridAxis> axes;
  for (std::size_t i = 0; i < grid->size(); ++i) {
    JsonObjectReader entry((*grid)[i], path.string(), "grid[" + std::to_string(i) + "]");
    GridAxis axis{entry.string("key"), {}};
    const nlohmann::json* values = entry.optional_raw("values");
    entry.reject_unknown_keys();
    if (values == nullptr || !values->is_array() || values->empty()) {
      entry.fail("values", "expected a non-empty array of values");
    }
    axis.values.assign(values->begin(), values->end());
    axes.push_back(std::move(axis));
  }
  return axes;
}

std::vector<GridPoint> expand_grid(const std::vector<GridAxis>& axes,
                                   const AxisOverrides& overrides_for) {
  if (axes.empty()) {
    throw UsageError("the grid is empty: give at least one --grid KEY=V1,V2,... or --grid-file");
  }
  std::set<std::string> names;
  for (const auto& axis : axes) {
    if (axis.values.empty()) throw UsageError("grid axis " + axis.name + " has no values");
    if (!names.insert(axis.name).second) {
      throw UsageError("grid axis " + axis.name + " is given twice");
    }
  }
  std::size_t count = 1;
  std::string sizes;
  for (const auto& axis : axes) {
    sizes += (sizes.empty() ? "" : " x ") + axis.name + " " + std::to_string(axis.values.size());
    // Counted without overflow: beyond the limit the product stops growing.
    count = count > kMaxGridPoints ? count : count * axis.values.size();
  }
  if (count > kMaxGridPoints) {
    throw UsageError("the grid has more than " + std::to_string(kMaxGridPoints) + " points (" +
                     sizes + "): split the study");
  }
  std::vector<GridPoint> points{GridPoint{}};
  for (const auto& axis : axes) {
    std::vector<GridPoint> next;
    for (const auto& point : points) {
      for (const auto& value : axis.values) {
        GridPoint extended = point;
        const auto extra = overrides_for(axis.name, value);
        extended.overrides.insert(extended.overrides.end(), extra.begin(), extra.end());
        extended.values.push_back(value);
        extended.labels.push_back(grid_label(value));
        next.push_back(std::move(extended));
      }
    }
    points = std::move(next);
  }
  return points;
}

std::string grid_label(const nlohmann::json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

}  // namespace servesim
