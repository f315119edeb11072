#pragma once

#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

namespace servesim {

// A figure: gnuplot commands that draw it from data files in the same folder.
struct Figure {
  std::string name;  // file stem: NAME.gp renders NAME.svg (and the other formats asked for)
  std::string body;  // set title/labels ... plot ... (may use multiplot)
  int width_px = 1000;
  int height_px = 620;
};

// The files a figure renders to. SVG by default (a vector figure any browser shows, which the
// HTML report inlines, and the cheapest to render); PNG and PDF when asked (--plot-format).
enum class PlotFormat { Png, Svg, Pdf };
using PlotFormats = std::vector<PlotFormat>;
inline const PlotFormats kDefaultPlotFormats{PlotFormat::Svg};
// "png", "svg" or "pdf".
const char* plot_format_extension(PlotFormat format);
// "png,svg,pdf": any non-empty list of the three, each once; UsageError naming `flag` else.
PlotFormats parse_plot_formats(const std::string& list, const std::string& flag);

// Writes DIR/NAME.gp, a script that renders DIR/NAME.<format> of each format when run from DIR
// (`cd DIR && gnuplot NAME.gp`).
void write_figure_script(const std::filesystem::path& dir, const Figure& figure,
                         const PlotFormats& formats = kDefaultPlotFormats);

// Renders the figures' scripts with gnuplot, rewritten for `formats` when they are not the
// default pair. When gnuplot is not installed, prints one warning saying how to render them
// later and returns false; the data and scripts stay.
bool render_figures(const std::filesystem::path& dir, const std::vector<Figure>& figures,
                    std::ostream& warnings, const PlotFormats& formats = kDefaultPlotFormats);

// The style of the s-th series of a figure: "lw 2 lc rgb ... dt ... pt ... ps 1.2". Colours
// from Okabe and Ito's palette (distinct under the common colour blindnesses), and each series
// also its own point shape and dash pattern, so that curves stay apart in greyscale print.
std::string series_style(std::size_t s);
// Its colour alone: "lc rgb \"#0072B2\"".
std::string series_colour(std::size_t s);

// An axis whose positive values span more than this factor is drawn log-scaled (the sweep's
// curve panels, compare's bars, the run's CDFs).
inline constexpr double kLogSpan = 30.0;

// Whether `values` (positive ones only) span more than kLogSpan.
bool spans_log_range(const std::vector<double>& values);

// A string as a gnuplot double-quoted literal.
std::string gnuplot_quote(const std::string& text);

}  // namespace servesim
