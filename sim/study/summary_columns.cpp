#include "sim/study/summary_columns.h"

#include "sim/core/error.h"

namespace servesim {

std::vector<std::pair<std::string, double>> summary_columns(const nlohmann::json& summary) {
  std::vector<std::pair<std::string, double>> columns;
  for (const auto& [key, value] : summary.items()) {
    if (value.is_object()) {
      for (const auto& [inner, number] : value.items()) {
        if (number.is_number()) columns.emplace_back(key + "." + inner, number.get<double>());
        if (number.is_boolean())
          columns.emplace_back(key + "." + inner, number.get<bool>() ? 1 : 0);
      }
    } else if (value.is_number()) {
      columns.emplace_back(key, value.get<double>());
    }
  }
  return columns;
}

std::optional<double> find_summary_value(const nlohmann::json& summary,
                                         const std::string& dotted_path) {
  const nlohmann::json* node = &summary;
  std::size_t start = 0;
  while (true) {
    const auto dot = dotted_path.find('.', start);
    const std::string key = dotted_path.substr(start, dot - start);
    if (!node->is_object() || !node->contains(key)) return std::nullopt;
    node = &(*node)[key];
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  if (!node->is_number()) return std::nullopt;
  return node->get<double>();
}

double summary_value(const nlohmann::json& summary, const std::string& dotted_path) {
  const auto value = find_summary_value(summary, dotted_path);
  if (!value) {
    throw InvariantError("the run summary has no number at \"" + dotted_path + "\"");
  }
  return *value;
}

}  // namespace servesim
