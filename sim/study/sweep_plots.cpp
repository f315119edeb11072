#include "sim/study/sweep_plots.h"

#include <algorithm>
#include <map>

#include "sim/core/error.h"
#include "sim/metrics/csv_format.h"
#include "sim/metrics/output_file.h"
#include "sim/study/point_simulation.h"
#include "sim/study/summary_columns.h"

namespace servesim {

CurveX parse_curve_x(const std::string& text, const std::string& origin) {
  if (text == "throughput") return CurveX::Throughput;
  if (text == "offered_rate") return CurveX::OfferedRate;
  throw InputError(origin, "expected throughput or offered_rate, got \"" + text + "\"");
}

namespace {

// The steady-state throughput the curves plot (capacity's); a summary written before sweeps
// measured it (a folder `servesim plot` redraws) has only the whole run's.
double steady_throughput(const nlohmann::json& summary) {
  return summary.contains("steady_state")
             ? summary_value(summary, "steady_state.throughput_requests_per_s")
             : summary_value(summary, "throughput_requests_per_s");
}

}  // namespace

std::optional<Figure> write_curve_figure(const SweepResult& sweep, const std::filesystem::path& dir,
                                         const CurveOptions& options) {
  const auto load = sweep.load_axis();
  if (!load) return std::nullopt;
  // A rate axis is the offered rate; a trace's time scale is not a rate, so its points are
  // placed at the rate their steady state offered.
  const bool rate_axis = sweep.rate_axis().has_value();
  // Points grouped by the labels of every other axis, series in first-seen order.
  std::vector<std::string> series_names;
  std::map<std::string, std::vector<const SweepRow*>> series;
  for (const auto& row : sweep.rows) {
    if (does_not_fit(row.summary)) continue;  // no point on a curve
    std::string name;
    for (std::size_t a = 0; a < sweep.axes.size(); ++a) {
      if (a == *load) continue;
      if (!name.empty()) name += ", ";
      name += sweep.axes.size() == 2 ? row.labels[a] : sweep.axes[a] + "=" + row.labels[a];
    }
    if (name.empty()) name = "all points";
    if (!series.contains(name)) series_names.push_back(name);
    series[name].push_back(&row);
  }
  struct Panel {
    const char* metric;
    double scale;
    const char* title;
    const char* ylabel;
    std::vector<double> values{};
  };
  Panel panels[] = {{"normalized_latency_s_per_token", 1e3, "Normalized latency",
                     "mean E2E / output tokens (ms/token)"},
                    {"ttft_s.p99", 1e3, "P99 TTFT", "P99 time to first token (ms)"},
                    {"tpot_s.p99", 1e3, "P99 TPOT", "P99 time per output token (ms)"}};
  const auto data = dir / "curves.dat";
  auto out = open_output_file(data);
  // Replicated points (sweep --seeds) carry each metric's 95% half-width: error bars.
  const bool replicated = std::any_of(sweep.rows.begin(), sweep.rows.end(), [](const SweepRow& r) {
    return r.summary.contains("seeds");
  });
  out << "# one block per series: rate_per_s steady_state_throughput_req_per_s "
         "normalized_latency_ms_per_token "
         "ttft_p99_ms tpot_p99_ms"
      << (replicated ? " and the three 95% half-widths (sweep --seeds)" : "") << "\n";
  for (const auto& name : series_names) {
    out << "# " << name << '\n';
    for (const SweepRow* row : series[name]) {
      const auto& load_value = row->values[*load];
      const double offered =
          !rate_axis ? summary_value(row->summary, "steady_state.offered_requests_per_s")
          : load_value.is_number() ? load_value.get<double>()
                                   : 0.0;
      out << format_9_digits(offered) << ' ' << format_9_digits(steady_throughput(row->summary));
      for (auto& panel : panels) {
        const double value = summary_value(row->summary, panel.metric) * panel.scale;
        panel.values.push_back(value);
        out << ' ' << format_9_digits(value);
      }
      for (const auto& panel : panels) {
        if (!replicated) break;
        const auto ci = find_summary_value(row->summary, std::string(panel.metric) + "_ci95");
        out << ' ' << format_9_digits(ci.value_or(0) * panel.scale);
      }
      out << '\n';
    }
    out << "\n\n";
  }
  close_output_file(out, data);

  const bool offered = options.x == CurveX::OfferedRate;
  // Fixed margins keep the three panels the same size; one legend, centred below them all,
  // one series a line, for which the figure grows 30 px a series.
  const int line_px = 30;
  const int height_px = 560 + line_px * static_cast<int>(series_names.size());
  const double bottom = (100.0 + line_px * static_cast<double>(series_names.size())) / height_px;
  const double top = 1.0 - 100.0 / height_px;
  std::string body =
      "set multiplot layout 1,3 title " +
      gnuplot_quote(options.title.empty() ? std::string("Latency against ") +
                                                (offered ? "offered rate" : "achieved throughput")
                                          : options.title) +
      " margins 0.06,0.98," + format_9_digits(bottom) + "," + format_9_digits(top) +
      " spacing 0.09\n" + "set grid\nset xlabel " +
      (offered ? "\"offered rate (requests/s)\"" : "\"steady-state throughput (requests/s)\"") +
      "\n";
  const std::string x_column = offered ? "1" : "2";
  for (std::size_t p = 0; p < std::size(panels); ++p) {
    const Panel& panel = panels[p];
    body += options.force_log_y || spans_log_range(panel.values)
                ? "set logscale y\nset yrange [*:*]\n"
                : "unset logscale y\nset yrange [0:*]\n";
    body += p == 0 ? "set key at screen 0.5,0.01 center bottom vertical\n" : "unset key\n";
    body += "set title \"" + std::string(panel.title) + "\"\nset ylabel \"" + panel.ylabel +
            "\"\nplot ";
    for (std::size_t s = 0; s < series_names.size(); ++s) {
      const std::string columns =
          x_column + ":" + std::to_string(p + 3) +
          (replicated ? ":" + std::to_string(p + 3 + std::size(panels)) : "");
      body += (s == 0 ? "" : ", \\\n     ") + std::string("\"curves.dat\" index ") +
              std::to_string(s) + " using " + columns + " with " +
              (replicated ? "yerrorlines" : "linespoints") + " " + series_style(s) + " title " +
              gnuplot_quote(series_names[s]);
    }
    body += '\n';
  }
  Figure figure{"latency_throughput", body, 1800, height_px};
  write_figure_script(dir, figure);
  return figure;
}

}  // namespace servesim
