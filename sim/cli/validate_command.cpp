#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/calibration/error_stats.h"
#include "sim/calibration/measurement_sources.h"
#include "sim/calibration/operator_validation.h"
#include "sim/calibration/prediction.h"
#include "sim/calibration/serving_point.h"
#include "sim/calibration/serving_prediction.h"
#include "sim/calibration/serving_validation.h"
#include "sim/cli/command.h"
#include "sim/cli/format.h"
#include "sim/cli/measurement_options.h"
#include "sim/cli/options.h"
#include "sim/cli/serving_options.h"
#include "sim/core/error.h"

namespace servesim::cli {
namespace {

namespace fs = std::filesystem;

std::string percent(double fraction) {
  return format_fixed(100 * fraction, 1) + "%";
}

std::string signed_percent(double fraction) {
  return (fraction >= 0 ? "+" : "") + percent(fraction);
}

// A measured or predicted figure with about four significant digits.
std::string figure(double value) {
  const double magnitude = std::fabs(value);
  const int decimals = magnitude >= 1000 ? 0 : magnitude >= 100 ? 1 : magnitude >= 1 ? 2 : 3;
  return format_fixed(value, decimals);
}

// --- validate --hw --measurements: operator times ------------------------------------------

int validate_operators(const po::variables_map& vm, CommandContext& context) {
  if (vm.count("hw") == 0) {
    throw UsageError("--hw is required with --measurements or --vidur (the profile to check)");
  }
  const LoadedMeasurements loaded = measurements_from_options(vm);
  const HardwareProfile hardware = load_hardware(vm["hw"].as<std::string>(), context);
  const ModelResolver models = [&](const std::string& name) { return load_model(name, context); };

  ErrorTable table;
  std::vector<double> predicted;
  predicted.reserve(loaded.records.size());
  for (const Measurement& m : loaded.records) {
    predicted.push_back(predict_seconds(m, hardware, &models));
    table.add(m.class_name(), predicted.back(), m.median_s);
  }
  const auto stats = table.summarize();
  if (vm.count("csv") != 0) {
    write_atomically(vm["csv"].as<std::string>(),
                     operator_predictions_csv(loaded.records, predicted));
  }

  if (vm.count("json") != 0) {
    nlohmann::json classes = nlohmann::json::object();
    for (const auto& [name, s] : stats)
      classes[name] = error_stats_to_json(s);
    const nlohmann::json doc = {{"hw", hardware.name},
                                {"files", loaded.files},
                                {"records", loaded.records.size()},
                                {"classes", classes}};
    context.out << doc.dump(2) << '\n';
    return 0;
  }
  context.out << "Predicting " << loaded.records.size() << " measured records from "
              << loaded.files.size() << " files with " << hardware.name << "\n\n";
  Table out({"class", "count", "MAPE", "median |err|", "max |err|", "max % err", "bias"});
  for (const auto& [name, s] : stats) {
    out.add_row({name, format_count(static_cast<double>(s.count)), percent(s.mape),
                 format_seconds(s.median_abs_error_s), format_seconds(s.max_abs_error_s),
                 percent(s.max_ape), percent(s.bias)});
  }
  out.print(context.out);
  if (vm.count("csv") != 0) context.out << "Wrote " << vm["csv"].as<std::string>() << "\n";
  return 0;
}

// --- validate --measured: end-to-end serving points -----------------------------------------

void print_serving_table(std::ostream& out, const ServingValidation& v) {
  Table points({"model", "hw", "tp", "workload", "stage", "rate", "metric", "measured", "predicted",
                "error", "overloaded meas/pred"},
               {1, 3, 6, 10});
  for (const PointComparison& c : v.points) {
    const ServingPoint& p = c.point;
    const auto* stage = std::get_if<LoadStage>(&p.workload);
    const auto rate = p.rate_per_s();
    const std::vector<std::string> head = {p.model.empty() ? p.model_name : p.model,
                                           p.hardware,
                                           std::to_string(p.tp),
                                           p.workload_label(),
                                           stage ? std::to_string(stage->stage) : "-",
                                           !rate               ? "-"
                                           : std::isinf(*rate) ? "inf"
                                                               : figure(*rate)};
    const std::string overloaded = std::string(c.measured_overloaded() ? "yes" : "no") + "/" +
                                   (c.predicted() ? (c.predicted_overloaded ? "yes" : "no") : "-");
    if (!c.predicted()) {
      auto row = head;
      row.insert(row.end(), {"(not predicted)", "", "", "", overloaded});
      points.add_row(row);
      continue;
    }
    for (const MetricComparison& m : c.metrics) {
      auto row = head;
      row.insert(row.end(),
                 {std::string(serving_metric_name(m.metric)), figure(m.measured),
                  m.predicted ? figure(*m.predicted) : "-",
                  m.relative_error ? signed_percent(*m.relative_error) : "-", overloaded});
      points.add_row(row);
    }
  }
  points.print(out);

  const std::size_t predicted = v.points.size() - v.not_predicted;
  out << "\nErrors over the " << predicted - v.measured_overloaded
      << " predicted points not measured overloaded (error = predicted / measured - 1):\n";
  Table stats({"metric", "count", "MAPE", "median |err|", "max |err|", "bias"});
  for (const auto& [metric, s] : v.metrics) {
    if (s.count == 0) {
      stats.add_row({std::string(serving_metric_name(metric)), "0", "-", "-", "-", "-"});
      continue;
    }
    stats.add_row({std::string(serving_metric_name(metric)), std::to_string(s.count),
                   percent(s.mape), percent(s.median_ape), percent(s.max_ape),
                   signed_percent(s.bias)});
  }
  stats.print(out);
  out << "\nMeasured overloaded (fewer than " << percent(kOverloadedCompletedShare)
      << " of the requests completed, or a mean TTFT over " << format_fixed(kOverloadedTtftS, 0)
      << " s; left out above): " << v.measured_overloaded
      << " points, predicted overloaded: " << v.overloaded_predicted_overloaded << " of them.\n"
      << "Predicted overloaded but not measured so: " << v.normal_predicted_overloaded
      << " points.\n";
  if (v.not_predicted == 0) return;
  out << "Not predicted: " << v.not_predicted << " points:\n";
  for (const PointComparison& c : v.points) {
    if (!c.predicted()) out << "  " << c.point.where() << ": " << c.not_predicted << '\n';
  }
}

// The residuals of each engine's class table, as --write-bands writes them.
void print_band_table(std::ostream& out, const std::map<std::string, ErrorBands>& bands) {
  Table table(
      {"engine", "GPU class", "family", "load", "points", "TTFT", "TPOT", "E2E", "throughput"});
  for (const auto& [engine, residuals] : bands) {
    // Each class with its number of points, in the order of its fields.
    std::map<std::vector<std::string>, std::size_t> classes;
    for (const BandResidual& r : residuals.residuals()) {
      const DeploymentClass& d = r.deployment;
      ++classes[{d.engine, d.hardware_class, d.model_family, d.regime}];
    }
    for (const auto& [c, points] : classes) {
      const BandLookup lookup = residuals.band_for({c[0], c[1], c[2], c[3]}, 0);
      std::vector<std::string> row = c;
      row.push_back(std::to_string(points));
      for (const auto& band : lookup.bands)
        row.push_back(!band ? "-" : band->range() + (band->scope == kClassScope ? "" : " *"));
      table.add_row(row);
    }
  }
  out << "\nError bands by deployment class (measured / predicted - 1, 10th to 90th "
         "percentile; * from a wider scope: fewer than "
      << kMinBandPoints << " points of the class itself):\n";
  table.print(out);
}

int validate_serving_points(const po::variables_map& vm, CommandContext& context) {
  std::optional<fs::path> bands_dir;
  if (vm.count("write-bands") != 0) {
    bands_dir = vm["write-bands"].as<std::string>();
    std::error_code ec;
    if (!fs::is_directory(*bands_dir, ec)) {
      throw InputError(bands_dir->string(), "--write-bands: expected an existing folder");
    }
  }
  const LoadedServingRuns loaded = load_serving_runs(vm, context);
  const auto& runs = loaded.runs;
  const auto& files = loaded.files;
  const auto& run_options = loaded.run_options;
  const std::size_t point_count = loaded.points;

  const ScratchFolder scratch;
  const ServingValidation validation = validate_serving(runs, [&](const ServingRun& run) {
    return simulate_serving_run(run, context.data_root, scratch.path(), run_options);
  });
  if (vm.count("csv") != 0) {
    write_atomically(vm["csv"].as<std::string>(), serving_validation_csv(validation));
  }
  const std::map<std::string, ErrorBands> bands = error_bands_of(validation);
  if (bands_dir) {
    for (const auto& [engine, residuals] : bands)
      write_atomically(*bands_dir / (engine + ".json"), residuals.to_json().dump(2) + "\n");
  }
  if (vm.count("json") != 0) {
    nlohmann::json doc = serving_validation_to_json(validation);
    doc["files"] = files;
    doc["runs"] = runs.size();
    doc["max_requests_per_point"] = run_options.max_requests_per_point
                                        ? nlohmann::json(*run_options.max_requests_per_point)
                                        : nlohmann::json(nullptr);
    context.out << doc.dump(2) << '\n';
    return 0;
  }
  const auto count = [](std::size_t n, const char* noun) {
    return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
  };
  context.out << "Simulating " << count(point_count, "measured point") << " from "
              << count(files.size(), "file") << " in " << count(runs.size(), "run");
  if (run_options.max_requests_per_point) {
    context.out << " (at most " << *run_options.max_requests_per_point << " requests per stage)";
  }
  context.out << "\n\n";
  print_serving_table(context.out, validation);
  if (vm.count("csv") != 0) context.out << "Wrote " << vm["csv"].as<std::string>() << "\n";
  if (bands_dir) {
    print_band_table(context.out, bands);
    for (const auto& [engine, residuals] : bands) {
      context.out << "Wrote " << (*bands_dir / (engine + ".json")).string() << " ("
                  << residuals.residuals().size() << " residuals)\n";
    }
  }
  return 0;
}

}  // namespace

int run_validate(CommandContext& context) {
  po::options_description options("Options", 100, 50);
  options.add_options()("hw", po::value<std::string>()->value_name("NAME|PATH"),
                        "hardware profile: the one checked (--measurements, required), or the "
                        "one every measured point runs on (--measured)")(
      "json", "print one JSON object instead of a table");
  add_measurement_options(options);
  po::options_description serving("End-to-end serving points (--measured)", 100, 50);
  add_serving_point_options(serving);
  options.add_options()("csv", po::value<std::string>()->value_name("OUT.csv"),
                        "write one row per point and metric (--measured), or per record with "
                        "its prediction (--measurements); written whole or not at all")(
      "write-bands", po::value<std::string>()->value_name("DIR"),
      "--measured: write each engine's residuals, which error bands are computed from, to "
      "DIR/<engine>.json (the shipped ones: engines/bands; docs/validation.md, Error bands)");
  options.add(serving);
  const auto vm = parse_options(
      context, options,
      "servesim validate --measured FILE... [--setup FILE] [--hw NAME] [--engine NAME] "
      "[--csv OUT.csv] [--max-requests-per-point N] [--json]\n"
      "       servesim validate --hw PROFILE --measurements FILE_OR_DIR... [--csv OUT.csv] "
      "[--json]",
      "With --measured: simulates every measured serving point (rows of one model, TP and\n"
      "workload with consecutive stages as one run, back to back) and reports per point the\n"
      "measured and predicted mean TTFT, ITL, E2E and throughput with the relative error, then\n"
      "per metric the MAPE, median and maximum error and the signed bias over the points that\n"
      "were not overloaded. Overloaded points are reported apart (see docs/validation.md).\n"
      "Example: servesim validate --measured ../shared/data/measured/vllm-0.15.1-h100-sxm.csv\n\n"
      "With --measurements or --vidur: predicts every measured operator record with the\n"
      "profile, using the formulas the simulator prices iterations with, and reports per\n"
      "operator class: count, MAPE, median and max absolute error, and the signed bias\n"
      "(> 0: the profile predicts too slow). Iteration records resolve their model by name.\n"
      "Example: servesim validate --hw a100-80gb --vidur ../shared/data/profiles/vidur "
      "--device a100");
  if (!vm) return 0;
  const bool serving_mode = vm->count("measured") != 0;
  const bool operator_mode =
      vm->count("measurements") != 0 || vm->count("vidur") != 0 || vm->count("device") != 0;
  if (serving_mode && operator_mode) {
    throw UsageError(
        "--measured (serving points) and --measurements/--vidur/--device (operator times) are "
        "two modes of validate; give one");
  }
  if (serving_mode) return validate_serving_points(*vm, context);
  for (const char* flag : {"setup", "engine", "max-requests-per-point", "write-bands"}) {
    if (vm->count(flag) != 0) {
      throw UsageError(std::string("--") + flag + " goes with --measured (serving points)");
    }
  }
  if (!operator_mode) {
    throw UsageError(
        "give --measured FILE... (serving points) or --measurements FILE_OR_DIR... / --vidur "
        "DIR --device NAME (operator times)");
  }
  return validate_operators(*vm, context);
}

}  // namespace servesim::cli
