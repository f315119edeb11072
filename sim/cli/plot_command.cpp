#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "sim/cli/options.h"
#include "sim/core/error.h"
#include "sim/core/json_reader.h"
#include "sim/study/run_plots.h"
#include "sim/study/sweep_plots.h"
#include "sim/study/sweep_result.h"

namespace servesim::cli {
namespace {

// How `plot` redraws a sweep's curves: as the sweep drew them, but for the flags given.
struct CurveFlags {
  std::optional<CurveX> x;
  bool log_y = false;
};

CurveOptions curve_options(const nlohmann::json& summary, const CurveFlags& flags) {
  CurveOptions options;
  if (const auto it = summary.find("plot"); it != summary.end() && it->is_object()) {
    options.title = it->value("title", "");
    options.x = parse_curve_x(it->value("x", "throughput"), "summary.json: plot.x");
    options.force_log_y = it->value("log_y", false);
  }
  if (flags.x) options.x = *flags.x;
  options.force_log_y = options.force_log_y || flags.log_y;
  return options;
}

// The figures of one output folder: a sweep's curves, a run's CDFs and timelines, or for a
// `compare` folder the scripts `compare` wrote and those of each policy's run.
std::vector<std::filesystem::path> plot_folder(const std::filesystem::path& dir,
                                               std::ostream& warnings, bool render,
                                               const CurveFlags& flags) {
  std::vector<std::filesystem::path> drawn;
  const auto summary_path = dir / "summary.json";
  const nlohmann::json summary = read_json_file(summary_path);
  std::vector<Figure> figures;
  if (summary.is_object() && summary.value("command", "") == "sweep") {
    if (auto figure = write_curve_figure(sweep_from_json(summary, summary_path.string()), dir,
                                         curve_options(summary, flags))) {
      figures.push_back(*figure);
    }
  } else if (std::filesystem::exists(dir / "compare.csv")) {
    for (const char* name : {"kv_breakdown", "latency_bars"}) {
      if (std::filesystem::exists(dir / (std::string(name) + ".gp"))) {
        figures.push_back(Figure{name, ""});
      }
    }
  } else if (std::filesystem::exists(dir / "capacity.csv")) {
    if (std::filesystem::exists(dir / "capacity.gp")) figures.push_back(Figure{"capacity", ""});
  } else {
    figures = write_run_figures(dir);
  }
  if (!figures.empty() && (!render || render_figures(dir, figures, warnings))) {
    for (const auto& figure : figures)
      drawn.push_back(dir / (figure.name + '.' +
                             (render ? plot_format_extension(kDefaultPlotFormats.front()) : "gp")));
  }
  std::vector<std::filesystem::path> subfolders;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.is_directory() && std::filesystem::exists(entry.path() / "summary.json")) {
      subfolders.push_back(entry.path());
    }
  }
  std::sort(subfolders.begin(), subfolders.end());
  for (const auto& sub : subfolders) {
    const auto more = plot_folder(sub, warnings, render, flags);
    drawn.insert(drawn.end(), more.begin(), more.end());
  }
  return drawn;
}

}  // namespace

int run_plot(CommandContext& context) {
  po::options_description options("Options", 100, 50);
  options.add_options()("dir", po::value<std::string>()->value_name("DIR")->required(),
                        "output folder of servesim run, compare, sweep or capacity")(
      "no-render", "write the plot data and gnuplot scripts only")(
      "x", po::value<std::string>()->value_name("AXIS"),
      "a sweep's curves against throughput or offered_rate (default: as the sweep drew them)")(
      "log-y", "log y axes on every panel of a sweep's curves");
  po::positional_options_description positional;
  positional.add("dir", 1);
  const auto vm = parse_options(
      context, options, "servesim plot DIR",
      "Draws the plots of an existing output folder as SVG with gnuplot, next to its\n"
      "CSV files: for a run, TTFT and TPOT CDFs, the KV memory breakdown over time and the\n"
      "batch size over time; for a sweep with a rate axis, latency against throughput per\n"
      "policy (log y where a panel spans over 30x); for compare, its KV breakdown and latency\n"
      "bars and each policy's run; for capacity, the points it simulated against the SLO.\n"
      "Example: servesim run --out out/ && servesim plot out/",
      &positional);
  if (!vm) return 0;
  const std::filesystem::path dir = (*vm)["dir"].as<std::string>();
  if (!std::filesystem::is_directory(dir)) {
    throw InputError(dir.string(), "is not a directory (expected a servesim output folder)");
  }
  if (!std::filesystem::exists(dir / "summary.json")) {
    throw InputError(dir.string(), "holds no summary.json: not a servesim output folder");
  }
  const bool render = vm->count("no-render") == 0;
  CurveFlags flags;
  if (vm->count("x") != 0) flags.x = parse_curve_x((*vm)["x"].as<std::string>(), "--x");
  flags.log_y = vm->count("log-y") != 0;
  const auto drawn = plot_folder(dir, context.err, render, flags);
  if (drawn.empty()) {
    context.out << "Nothing to plot in " << dir.string()
                << " (runs need requests.csv and iterations.csv; sweeps a rate axis)\n";
  }
  for (const auto& path : drawn)
    context.out << "Wrote " << path.string() << (render ? " (and .svg)" : "") << '\n';
  return 0;
}

}  // namespace servesim::cli
