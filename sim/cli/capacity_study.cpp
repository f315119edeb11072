#include "sim/cli/capacity_study.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <sstream>

#include "sim/cli/run_options.h"
#include "sim/cli/study_options.h"
#include "sim/core/error.h"
#include "sim/metrics/csv_format.h"
#include "sim/metrics/output_file.h"
#include "sim/study/capacity_plots.h"
#include "sim/study/slo_bounds.h"
#include "sim/study/summary_columns.h"

namespace servesim::cli {

std::string rate_text(double rate_per_s) {
  return format_9_digits(rate_per_s);
}

const std::vector<std::string> kPointColumns{"req/s",       "offered req/s", "served %",
                                             "TTFT p99 ms", "TPOT p99 ms",   "E2E p99 s",
                                             "stable",      "meets SLO",     "violations"};

// The req/s column is the steady-state throughput (requests completing between the end of
// the warm-up and the last arrival, per second), not the whole run's, whose drain after the
// last arrival lasts as long as the longest request.
void add_point_cells(std::vector<std::string>& cells, const nlohmann::json& summary,
                     const SloVerdict& verdict) {
  if (does_not_fit(summary)) {
    cells.insert(cells.end(), {"-", "-", "-", "-", "-", "-", "-", "no", violations_text(verdict)});
    return;
  }
  cells.push_back(
      format_fixed(summary_value(summary, "steady_state.throughput_requests_per_s"), 3));
  cells.push_back(format_fixed(summary_value(summary, "steady_state.offered_requests_per_s"), 3));
  cells.push_back(format_fixed(summary_value(summary, "steady_state.served_ratio") * 100, 1));
  cells.push_back(format_fixed(summary_value(summary, "ttft_s.p99") * 1e3, 1));
  cells.push_back(format_fixed(summary_value(summary, "tpot_s.p99") * 1e3, 2));
  cells.push_back(format_fixed(summary_value(summary, "e2e_s.p99"), 2));
  cells.push_back(unstable(summary) ? "no" : "yes");
  cells.push_back(verdict.met ? "yes" : "no");
  cells.push_back(violations_text(verdict));
}

void CapacityPoints::add(std::vector<std::string> cells, const nlohmann::json& summary,
                         const SloVerdict& verdict, double x_value) {
  key_cells.push_back(std::move(cells));
  summaries.push_back(&summary);
  verdicts.push_back(&verdict);
  x.push_back(x_value);
}

std::string points_csv(const CapacityPoints& points) {
  const auto& [keys, key_cells, summaries, verdicts, x, x_label] = points;
  std::ostringstream out;
  std::vector<std::string> metrics;
  std::vector<std::map<std::string, double>> values;
  for (const nlohmann::json* summary : summaries) {
    auto& point = values.emplace_back();
    for (const auto& [name, value] : summary_columns(*summary)) {
      if (std::find(metrics.begin(), metrics.end(), name) == metrics.end()) metrics.push_back(name);
      point[name] = value;
    }
  }
  for (const auto& name : keys)
    out << name << ',';
  out << "met,violations";
  for (const auto& m : metrics)
    out << ',' << m;
  out << '\n';
  for (std::size_t i = 0; i < summaries.size(); ++i) {
    for (const auto& cell : key_cells[i])
      out << csv_field(cell) << ',';
    out << (verdicts[i]->met ? 1 : 0) << ',' << csv_field(violations_text(*verdicts[i]));
    for (const auto& m : metrics) {
      out << ',';
      if (const auto it = values[i].find(m); it != values[i].end()) {
        out << format_round_trip(it->second);
      }
    }
    out << '\n';
  }
  return out.str();
}

namespace {

void write_text(const std::filesystem::path& path, const std::string& text) {
  auto out = open_output_file(path);
  out << text;
  close_output_file(out, path);
}

}  // namespace

void publish_capacity(const CapacityStudy& study, const po::variables_map& vm,
                      const CapacityPoints& points, const nlohmann::json& document,
                      const std::vector<std::pair<std::string, std::string>>& files) {
  const auto out_dir = study_out_dir(vm);
  if (!out_dir) return;
  publish_output(*out_dir, [&](const std::filesystem::path& staging) {
    write_text(staging / "capacity.csv", points_csv(points));
    write_text(staging / "summary.json", document.dump(2) + "\n");
    write_command_record(staging, study.context);
    std::vector<CapacityPlotPoint> plotted;
    for (std::size_t i = 0; i < points.x.size(); ++i)
      plotted.push_back({points.x[i], points.verdicts[i]->worst_ratio, points.verdicts[i]->met});
    std::string terms;
    for (const auto& term : slo_json(study.slo))
      terms += (terms.empty() ? "" : ", ") + term.get<std::string>();
    const std::string title = "Capacity search, SLO: " + terms;
    if (auto figure = write_capacity_figure(staging, plotted, points.x_label, title);
        figure && vm.count("no-plots") == 0) {
      render_figures(staging, {*figure}, study.context.err, plot_formats_from(vm));
    }
    for (const auto& [name, text] : files) {
      std::filesystem::create_directories((staging / name).parent_path());
      write_text(staging / name, text);
    }
  });
  if (study.journal != nullptr) study.journal->finish();
}

std::optional<std::string> no_shape_fits(const std::vector<ShapePoints>& shapes) {
  std::string text;
  for (const ShapePoints& shape : shapes) {
    if (shape.summaries.empty()) return std::nullopt;
    for (const nlohmann::json* summary : shape.summaries) {
      if (!does_not_fit(*summary)) return std::nullopt;
    }
    text +=
        (text.empty() ? "" : "; ") + shape.label + ": " + *does_not_fit(*shape.summaries.back());
  }
  if (text.empty()) return std::nullopt;
  return text;
}

int refuse_unfit_shapes(const CapacityStudy& study, const std::string& reasons) {
  if (study.journal != nullptr) study.journal->finish();
  study.context.err << "servesim: error: no shape fits or starts: " << reasons << '\n';
  return exit_code_for(ErrorKind::Infeasible);
}

std::vector<ReplicaShape> parse_shapes(const std::string& list, const nlohmann::json& base) {
  std::vector<ReplicaShape> shapes;
  if (list.empty()) {
    shapes.push_back({base["hardware"].get<std::string>(), base["tp"].get<std::int64_t>(),
                      base["pp"].get<std::int64_t>(), std::nullopt});
    return shapes;
  }
  // Split keeping empty fields, so "h100-sxm:" and "a,,b" and "a," are refused, not read as
  // fewer fields.
  const auto split = [](const std::string& text, char separator) {
    std::vector<std::string> parts{""};
    for (const char c : text) {
      if (c == separator) {
        parts.emplace_back();
      } else {
        parts.back() += c;
      }
    }
    return parts;
  };
  for (const std::string& item : split(list, ',')) {
    // An optional price per GPU-hour after '@'.
    std::optional<double> price;
    const std::string::size_type at = item.find('@');
    if (at != std::string::npos) {
      const std::string text = item.substr(at + 1);
      try {
        std::size_t end = 0;
        const double value = std::stod(text, &end);
        if (end == text.size() && value > 0 && std::isfinite(value)) price = value;
      } catch (const std::exception&) {
      }
      if (!price) {
        throw UsageError("--shapes \"" + item +
                         "\": expected a positive price in USD per GPU-hour after '@'");
      }
    }
    const std::string shape_text = item.substr(0, at);
    const std::vector<std::string> parts = split(shape_text, ':');
    const auto degree = [&](std::size_t i) -> std::int64_t {
      if (i >= parts.size()) return 1;
      try {
        std::size_t end = 0;
        const long long value = std::stoll(parts[i], &end);
        if (end == parts[i].size() && value >= 1) return value;
      } catch (const std::exception&) {
      }
      throw UsageError("--shapes \"" + item +
                       "\": expected HARDWARE[:TP[:PP]][@PRICE] with positive "
                       "integer degrees");
    };
    if (parts[0].empty() || parts.size() > 3) {
      throw UsageError("--shapes \"" + item + "\": expected HARDWARE[:TP[:PP]][@PRICE]");
    }
    shapes.push_back({parts[0], degree(1), degree(2), price});
  }
  return shapes;
}

std::optional<double> price_per_gpu_hour(const ReplicaShape& shape, const po::variables_map& vm,
                                         const CommandContext& context) {
  return servesim::price_per_gpu_hour(shape, gpu_cost_flag(vm), context.data_root);
}

std::optional<double> gpu_cost_flag(const po::variables_map& vm) {
  if (vm.count("gpu-cost-per-hour") == 0) return std::nullopt;
  return vm["gpu-cost-per-hour"].as<double>();
}

const std::vector<std::string> kPriceColumns{"$/hour", "$/M input", "$/M output", "$/M tokens",
                                             "$/1k requests"};

std::vector<std::string> price_cells(const std::optional<ServingPrices>& prices) {
  if (!prices) return std::vector<std::string>(kPriceColumns.size(), "-");
  return {format_fixed(prices->usd_per_hour, 2),
          format_fixed(prices->usd_per_million_input_tokens, 3),
          format_fixed(prices->usd_per_million_output_tokens, 3),
          format_fixed(prices->usd_per_million_tokens, 3),
          format_fixed(prices->usd_per_thousand_requests, 4)};
}

}  // namespace servesim::cli
