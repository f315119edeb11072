#include "sim/study/gnuplot.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <optional>
#include <sstream>

#include "sim/core/error.h"
#include "sim/metrics/csv_format.h"
#include "sim/metrics/output_file.h"

extern char** environ;

namespace servesim {
namespace {

std::filesystem::path find_gnuplot() {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return {};
  std::stringstream dirs(path);
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty()) continue;
    const auto candidate = std::filesystem::path(dir) / "gnuplot";
    std::error_code ec;
    if (std::filesystem::is_regular_file(candidate, ec)) return candidate;
  }
  return {};
}

// Runs `gnuplot -e "cd DIR" SCRIPT...` and returns its exit status: one process for every
// script, since starting gnuplot (its fonts above all) costs about as much as a figure.
int run_gnuplot(const std::filesystem::path& gnuplot, const std::filesystem::path& dir,
                const std::vector<std::string>& scripts) {
  const std::string cd = "cd " + gnuplot_quote(dir.string());
  std::vector<std::string> args{gnuplot.string(), "-e", cd};
  args.insert(args.end(), scripts.begin(), scripts.end());
  std::vector<char*> argv;
  for (auto& arg : args)
    argv.push_back(arg.data());
  argv.push_back(nullptr);
  // gnuplot's chatter ("empty x range") is not servesim's to print; a failure is reported.
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, gnuplot.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return -1;
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

std::string gnuplot_quote(const std::string& text) {
  std::string quoted = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') quoted += '\\';
    quoted += c;
  }
  return quoted + "\"";
}

const char* plot_format_extension(PlotFormat format) {
  return format == PlotFormat::Png ? "png" : format == PlotFormat::Svg ? "svg" : "pdf";
}

PlotFormats parse_plot_formats(const std::string& list, const std::string& flag) {
  PlotFormats formats;
  std::vector<std::string> names;
  std::stringstream items(list);
  for (std::string item; std::getline(items, item, ',');)
    names.push_back(item);
  for (const std::string& name : names) {
    std::optional<PlotFormat> format;
    for (const PlotFormat known : {PlotFormat::Png, PlotFormat::Svg, PlotFormat::Pdf}) {
      if (name == plot_format_extension(known)) format = known;
    }
    if (!format || std::find(formats.begin(), formats.end(), *format) != formats.end()) {
      throw UsageError(flag + ": expected a list of png, svg and pdf, each once, got \"" + list +
                       "\"");
    }
    formats.push_back(*format);
  }
  if (formats.empty()) throw UsageError(flag + ": expected png, svg or pdf");
  return formats;
}

void write_figure_script(const std::filesystem::path& dir, const Figure& figure,
                         const PlotFormats& formats) {
  const auto path = dir / (figure.name + ".gp");
  auto out = open_output_file(path);
  out << "# Written by servesim. Render from this folder with: gnuplot " << figure.name << ".gp\n";
  const std::string pixels =
      std::to_string(figure.width_px) + "," + std::to_string(figure.height_px);
  // A PDF page of the PNG's proportions: 72 pixels to the inch, as cairo sets its fonts.
  const std::string inches = format_9_digits(figure.width_px / 72.0) + "in," +
                             format_9_digits(figure.height_px / 72.0) + "in";
  for (const PlotFormat format : formats) {
    const char* terminal = format == PlotFormat::Png   ? "pngcairo noenhanced"
                           : format == PlotFormat::Svg ? "svg dynamic noenhanced"
                                                       : "pdfcairo noenhanced";
    const char* extension = plot_format_extension(format);
    // Ticks in plain digits up to 10 significant ones (1000000, not gnuplot's 1e+06).
    out << "reset\nset terminal " << terminal << " font \"sans,15\" linewidth 1.5 size "
        << (format == PlotFormat::Pdf ? inches : pixels) << "\nset output \"" << figure.name << '.'
        << extension << "\"\n"
        << "set format x \"%.10g\"\nset format y \"%.10g\"\n"
        << figure.body << "unset multiplot\nunset output\n";
  }
  close_output_file(out, path);
}

bool render_figures(const std::filesystem::path& dir, const std::vector<Figure>& figures,
                    std::ostream& warnings, const PlotFormats& formats) {
  if (formats != kDefaultPlotFormats) {
    for (const auto& figure : figures)
      write_figure_script(dir, figure, formats);
  }
  const auto gnuplot = find_gnuplot();
  if (gnuplot.empty()) {
    warnings << "servesim: warning: gnuplot not found, so no plots were drawn; their "
                "data and .gp scripts are next to the CSVs (apt-get install gnuplot-nox, then "
                "`servesim plot DIR`)\n";
    return false;
  }
  const auto absolute = std::filesystem::absolute(dir);
  std::vector<std::string> scripts;
  for (const auto& figure : figures)
    scripts.push_back(figure.name + ".gp");
  if (scripts.empty() || run_gnuplot(gnuplot, absolute, scripts) == 0) return true;
  // gnuplot stops at the first script that fails: find it, one process per script.
  for (const auto& script : scripts) {
    if (run_gnuplot(gnuplot, absolute, {script}) != 0) {
      throw InputError((dir / script).string(),
                       "gnuplot failed to render it (run gnuplot on it to see why)");
    }
  }
  throw InputError(dir.string(), "gnuplot failed to render the figures together");
}

namespace {

// Okabe-Ito, the faint yellow last; filled circle, square, triangles and diamond, then open.
constexpr std::array<const char*, 8> kColours = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                                 "#E69F00", "#56B4E9", "#000000", "#F0E442"};
constexpr std::array<int, 7> kPoints = {7, 5, 9, 11, 13, 6, 4};
constexpr int kDashes = 5;

}  // namespace

std::string series_colour(std::size_t s) {
  return "lc rgb \"" + std::string(kColours[s % kColours.size()]) + "\"";
}

std::string series_style(std::size_t s) {
  return "lw 2 " + series_colour(s) + " dt " + std::to_string(1 + s % kDashes) + " pt " +
         std::to_string(kPoints[s % kPoints.size()]) + " ps 1.2";
}

bool spans_log_range(const std::vector<double>& values) {
  double low = 0, high = 0;
  for (const double v : values) {
    if (!(v > 0)) continue;
    low = low == 0 ? v : std::min(low, v);
    high = std::max(high, v);
  }
  return low > 0 && high > kLogSpan * low;
}

}  // namespace servesim
