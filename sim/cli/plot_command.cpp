#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "sim/cli/options.h"
#include "sim/config/json_reader.h"
#include "sim/core/error.h"
#include "sim/study/run_plots.h"
#include "sim/study/sweep_result.h"

namespace servesim::cli {
namespace {

// The figures of one output folder: a sweep's curves, a run's CDFs and timelines, or for a
// `compare` folder those of each policy's run.
std::vector<std::filesystem::path> plot_folder(const std::filesystem::path& dir,
                                               std::ostream& warnings, bool render) {
  std::vector<std::filesystem::path> drawn;
  const auto summary_path = dir / "summary.json";
  const nlohmann::json summary = read_json_file(summary_path);
  std::vector<Figure> figures;
  if (summary.is_object() && summary.value("command", "") == "sweep") {
    if (auto figure = write_curve_figure(sweep_from_json(summary, summary_path.string()), dir)) {
      figures.push_back(*figure);
    }
  } else {
    figures = write_run_figures(dir);
  }
  if (!figures.empty() && (!render || render_figures(dir, figures, warnings))) {
    for (const auto& figure : figures)
      drawn.push_back(dir / (figure.name + (render ? ".png" : ".gp")));
  }
  std::vector<std::filesystem::path> subfolders;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.is_directory() && std::filesystem::exists(entry.path() / "summary.json")) {
      subfolders.push_back(entry.path());
    }
  }
  std::sort(subfolders.begin(), subfolders.end());
  for (const auto& sub : subfolders) {
    const auto more = plot_folder(sub, warnings, render);
    drawn.insert(drawn.end(), more.begin(), more.end());
  }
  return drawn;
}

}  // namespace

int run_plot(CommandContext& context) {
  po::options_description options("Options", 100, 50);
  options.add_options()("dir", po::value<std::string>()->value_name("DIR")->required(),
                        "output folder of servesim run, compare or sweep")(
      "no-render", "write the plot data and gnuplot scripts only");
  po::positional_options_description positional;
  positional.add("dir", 1);
  const auto vm = parse_options(
      context, options, "servesim plot DIR",
      "Draws the plots of an existing output folder as PNG and SVG with gnuplot, next to its\n"
      "CSV files: for a run, TTFT and TPOT CDFs, the KV memory breakdown over time and the\n"
      "batch size over time; for a sweep with a rate axis, latency against throughput per\n"
      "policy; for compare, each policy's run.\n"
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
  const auto drawn = plot_folder(dir, context.err, render);
  if (drawn.empty()) {
    context.out << "Nothing to plot in " << dir.string()
                << " (runs need requests.csv and iterations.csv; sweeps a rate axis)\n";
  }
  for (const auto& path : drawn)
    context.out << "Wrote " << path.string() << (render ? " (and .svg)" : "") << '\n';
  return 0;
}

}  // namespace servesim::cli
