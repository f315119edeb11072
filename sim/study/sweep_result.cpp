#include "sim/study/sweep_result.h"

#include <algorithm>
#include <map>

#include "sim/core/error.h"
#include "sim/core/json_reader.h"
#include "sim/metrics/csv_format.h"
#include "sim/metrics/output_file.h"
#include "sim/study/point_simulation.h"
#include "sim/study/summary_columns.h"

namespace servesim {

std::optional<std::size_t> SweepResult::rate_axis() const {
  for (std::size_t i = 0; i < axes.size(); ++i) {
    if (axes[i] == "rate" || axes[i] == "workload.arrival.rate_per_s") return i;
  }
  return std::nullopt;
}

std::optional<std::size_t> SweepResult::load_axis() const {
  if (const auto rate = rate_axis()) return rate;
  for (std::size_t i = 0; i < axes.size(); ++i) {
    if (axes[i] == "time-scale" || axes[i] == "time_scale" ||
        axes[i] == "workload.trace.time_scale") {
      return i;
    }
  }
  return std::nullopt;
}

void write_sweep_csv(const SweepResult& sweep, const std::filesystem::path& path) {
  // Every metric any point reported, in first-seen order.
  std::vector<std::string> metrics;
  std::vector<std::map<std::string, double>> values;
  for (const auto& row : sweep.rows) {
    auto& point = values.emplace_back();
    for (const auto& [name, value] : summary_columns(row.summary)) {
      if (std::find(metrics.begin(), metrics.end(), name) == metrics.end()) {
        metrics.push_back(name);
      }
      point[name] = value;
    }
  }
  // A point that does not fit has empty metric cells and its reason in a last column, which
  // only sweeps with such a point have.
  const bool any_unfit = std::any_of(sweep.rows.begin(), sweep.rows.end(),
                                     [](const SweepRow& row) { return does_not_fit(row.summary); });
  auto out = open_output_file(path);
  out << "point";
  for (const auto& axis : sweep.axes)
    out << ',' << csv_field(axis);
  for (const auto& metric : metrics)
    out << ',' << metric;
  if (any_unfit) out << ",does_not_fit";
  out << '\n';
  for (std::size_t i = 0; i < sweep.rows.size(); ++i) {
    out << i;
    for (const auto& label : sweep.rows[i].labels)
      out << ',' << csv_field(label);
    for (const auto& metric : metrics) {
      out << ',';
      if (const auto it = values[i].find(metric); it != values[i].end()) {
        out << format_round_trip(it->second);
      }
    }
    if (any_unfit) out << ',' << csv_field(does_not_fit(sweep.rows[i].summary).value_or(""));
    out << '\n';
  }
  close_output_file(out, path);
}

nlohmann::json sweep_to_json(const SweepResult& sweep) {
  nlohmann::json points = nlohmann::json::array();
  for (std::size_t i = 0; i < sweep.rows.size(); ++i) {
    nlohmann::json values = nlohmann::json::object();
    for (std::size_t a = 0; a < sweep.axes.size(); ++a)
      values[sweep.axes[a]] = sweep.rows[i].values[a];
    points.push_back(
        {{"point", i}, {"values", std::move(values)}, {"summary", sweep.rows[i].summary}});
  }
  return {{"axes", sweep.axes}, {"points", std::move(points)}};
}

SweepResult sweep_from_json(const nlohmann::json& document, const std::string& source_name) {
  SweepResult sweep;
  try {
    sweep.axes = document.at("axes").get<std::vector<std::string>>();
    for (const auto& point : document.at("points")) {
      SweepRow row;
      row.values = nlohmann::json::array();
      for (const auto& axis : sweep.axes) {
        const auto& value = point.at("values").at(axis);
        row.values.push_back(value);
        row.labels.push_back(value.is_string() ? value.get<std::string>() : value.dump());
      }
      row.summary = point.at("summary");
      sweep.rows.push_back(std::move(row));
    }
  } catch (const nlohmann::json::exception& error) {
    throw InputError(source_name, std::string("not a servesim sweep.json: ") + error.what());
  }
  return sweep;
}

}  // namespace servesim
