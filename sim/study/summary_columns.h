#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace servesim {

// summary.json flattened to "ttft_s.p99"-style columns, in summary.json's key order (a
// true/false as 1/0).
std::vector<std::pair<std::string, double>> summary_columns(const nlohmann::json& summary);

// A number at a dotted path of a summary ("ttft_s.p99"); throws InvariantError if absent.
// The number at a dotted path ("ttft_s.p99") of a summary, or nothing where it has none.
std::optional<double> find_summary_value(const nlohmann::json& summary,
                                         const std::string& dotted_path);
double summary_value(const nlohmann::json& summary, const std::string& dotted_path);

}  // namespace servesim
