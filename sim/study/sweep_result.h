#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace servesim {

struct SweepRow {
  std::vector<std::string> labels;  // one per axis, as in the CSV
  nlohmann::json values;            // one per axis, as given
  nlohmann::json summary;           // summary.json of the point's run, or {"does_not_fit": ...}
};

struct SweepResult {
  std::vector<std::string> axes;  // axis names as given
  std::vector<SweepRow> rows;     // in grid order, the last axis varying fastest

  // The axis that sets the arrival rate ("rate" or workload.arrival.rate_per_s), if any.
  std::optional<std::size_t> rate_axis() const;
  // The axis that sets the load: the rate axis, else one that rescales a trace's arrival
  // times (time-scale, time_scale or workload.trace.time_scale), if any.
  std::optional<std::size_t> load_axis() const;
};

// sweep.csv: one row per point: "point", each axis, then every summary metric flattened
// ("ttft_s.p99"); a metric absent from a point's summary is an empty cell.
void write_sweep_csv(const SweepResult& sweep, const std::filesystem::path& path);

// sweep.json: {"axes": [...], "points": [{"point": i, "values": {...}, "summary": {...}}]}.
nlohmann::json sweep_to_json(const SweepResult& sweep);
SweepResult sweep_from_json(const nlohmann::json& document, const std::string& source_name);

}  // namespace servesim
