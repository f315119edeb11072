#include "sim/study/run_plots.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <string>

#include "sim/metrics/csv_format.h"
#include "sim/metrics/output_file.h"
#include "sim/metrics/run_summary.h"
#include "sim/study/gnuplot.h"

namespace servesim {
namespace {

constexpr std::size_t kMaxQuantiles = 500;

// (value, cumulative share) pairs of a sample in ascending order, at most kMaxQuantiles of them.
void write_cdf_block(std::ostream& out, const LatencySample& sample, double scale) {
  const auto n = static_cast<std::size_t>(sample.count());
  const std::size_t step = std::max<std::size_t>(1, n / kMaxQuantiles);
  std::vector<std::int64_t> ranks;
  for (std::size_t i = 0; i < n; i += step)
    ranks.push_back(static_cast<std::int64_t>(i));
  const std::vector<double> values = sample.values_at_ranks(ranks);
  for (std::size_t k = 0; k < ranks.size(); ++k) {
    out << format_9_digits(values[k] * scale) << ' '
        << format_9_digits(static_cast<double>(ranks[k] + 1) / static_cast<double>(n)) << '\n';
  }
  if (n > 0 && (n - 1) % step != 0) out << format_9_digits(sample.max() * scale) << " 1\n";
  out << "\n\n";
}

// How a CDF panel shows its latencies: in ms, or in seconds once the slowest reaches 10 s
// (no tick of 5 or more digits), on a log axis when they span more than kLogSpan.
struct CdfAxis {
  double scale = 1e3;
  const char* unit = "ms";
  bool log = false;
  double tick = 0;  // linear axes: a 1, 2 or 5 x 10^k step giving 4 to 10 ticks (0: gnuplot's)
};

// The 1, 2 or 5 x 10^k at or above `span` / 5.
double nice_tick(double span) {
  if (!(span > 0)) return 0;
  const double raw = span / 5;
  const double decade = std::pow(10.0, std::floor(std::log10(raw)));
  for (const double m : {1.0, 2.0, 5.0}) {
    if (m * decade >= raw) return m * decade;
  }
  return 10 * decade;
}

CdfAxis cdf_axis(const LatencySample& seconds) {
  CdfAxis axis;
  if (seconds.count() == 0) return axis;
  const double low = seconds.min(), high = seconds.max();
  if (high >= 10) axis = {1, "s", false, 0};
  axis.log = low > 0 && high > kLogSpan * low;
  if (!axis.log) axis.tick = nice_tick((high - low) * axis.scale);
  return axis;
}

std::string cdf_panel(const CdfAxis& axis, const char* name, const char* title) {
  return std::string(axis.log ? "set logscale x\nset xtics autofreq\n" : "unset logscale x\n") +
         (axis.tick > 0 ? "set xtics " + format_9_digits(axis.tick) + "\n" : "") + "set xlabel \"" +
         name + " (" + axis.unit + (axis.log ? ", log scale" : "") + ")\"\nset title \"" + title +
         "\"\n";
}

std::optional<Figure> latency_cdf(const std::filesystem::path& dir, const RunFigureData& data) {
  const LatencySample& ttft_s = data.ttft_s();
  const LatencySample& tpot_s = data.tpot_s();
  if (ttft_s.count() == 0) return std::nullopt;
  const auto path = dir / "latency_cdf.dat";
  auto out = open_output_file(path);
  const CdfAxis ttft_axis = cdf_axis(ttft_s), tpot_axis = cdf_axis(tpot_s);
  out << "# TTFT (" << ttft_axis.unit << ") and cumulative share of completed requests, then TPOT ("
      << tpot_axis.unit << ")\n";
  write_cdf_block(out, ttft_s, ttft_axis.scale);
  write_cdf_block(out, tpot_s, tpot_axis.scale);
  close_output_file(out, path);
  std::string body =
      "set multiplot layout 1,2 title \"Latency distribution over completed requests\"\n"
      "set grid\nset key top left\nset yrange [0:1]\n"
      "set ylabel \"fraction of requests\"\n" +
      cdf_panel(ttft_axis, "TTFT", "Time to first token") +
      "plot \"latency_cdf.dat\" index 0 using 1:2 with lines lw 2 " + series_colour(0) +
      " title \"TTFT\"\n" + cdf_panel(tpot_axis, "TPOT", "Time per output token");
  body += tpot_s.count() == 0 ? "plot NaN title \"no request had 2+ output tokens\"\n"
                              : "plot \"latency_cdf.dat\" index 1 using 1:2 with lines lw 2 " +
                                    series_colour(1) + " title \"TPOT\"\n";
  return Figure{"latency_cdf", body, 1100, 480};
}

// A disaggregated run's TTFT in its parts (requests.csv's ttft_PART_s columns), stacked, as
// means over requests grouped by prompt length: ten groups of equal count, shortest first.
std::optional<Figure> ttft_breakdown(const std::filesystem::path& dir,
                                     const RunFigureData& figure_data) {
  std::vector<std::pair<double, std::array<double, kTtftParts>>> rows = figure_data.ttft_parts();
  if (rows.empty()) return std::nullopt;
  std::stable_sort(rows.begin(), rows.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  const std::size_t groups = std::min<std::size_t>(10, rows.size());
  const auto data = dir / "ttft_breakdown.dat";
  auto out = open_output_file(data);
  out << "# requests grouped by prompt length (ten groups of equal count): mean prompt tokens, "
         "then the mean of each TTFT part (ms): prefill_queue prefill transfer_queue transfer "
         "decode_queue first_decode\n";
  for (std::size_t g = 0; g < groups; ++g) {
    const std::size_t begin = g * rows.size() / groups;
    const std::size_t end = (g + 1) * rows.size() / groups;
    double tokens = 0;
    std::array<double, kTtftParts> sums{};
    for (std::size_t r = begin; r < end; ++r) {
      tokens += rows[r].first;
      for (std::size_t i = 0; i < kTtftParts; ++i)
        sums[i] += rows[r].second[i];
    }
    const auto n = static_cast<double>(end - begin);
    out << std::llround(tokens / n);
    for (const double sum : sums)
      out << ' ' << format_9_digits(1e3 * sum / n);
    out << '\n';
  }
  close_output_file(out, data);
  std::string body =
      "set title \"TTFT in parts, by prompt length (means over ten groups of requests)\"\n"
      "set xlabel \"mean prompt tokens of the group\"\nset ylabel \"ms\"\n"
      "set style data histograms\nset style histogram rowstacked\nset boxwidth 0.8\n"
      "set style fill solid 0.85 noborder\nset grid y\nset key outside right top\n"
      "set xtics rotate by -45\nset yrange [0:*]\n";
  for (std::size_t i = 0; i < kTtftParts; ++i) {
    body += i == 0 ? "plot \"ttft_breakdown.dat\" using 2:xtic(1) title \"prefill_queue\""
                   : ", \\\n     \"\" using " + std::to_string(i + 2) + " title \"" +
                         kTtftPartNames[i] + "\"";
  }
  body += "\n";
  return Figure{"ttft_breakdown", body, 1100, 560};
}

std::vector<Figure> time_series(const std::filesystem::path& dir,
                                const RunFigureData& figure_data) {
  if (!figure_data.has_iterations()) return {};
  const double width_s = figure_data.bin_width_s();
  const std::vector<RunFigureData::Bin>& binned = figure_data.bins();
  const std::size_t bins = binned.size();
  const double cached_total = figure_data.cached_tokens();
  const auto data = dir / "timeline.dat";
  auto out = open_output_file(data);
  out << "# time_s mean_batch_size, then cumulative KV shares (%): token_states +reserved "
         "+internal +external +free +cached, then the prefix-cache hit rate (%)\n";
  for (std::size_t b = 0; b < bins; ++b) {
    const RunFigureData::Bin& bin = binned[b];
    if (bin.seconds <= 0) continue;
    out << format_9_digits((static_cast<double>(b) + 0.5) * width_s) << ' '
        << format_9_digits(bin.batch_seconds / bin.seconds);
    double cumulative = 0;
    for (std::size_t c = 0; c < 6; ++c) {
      cumulative += bin.kv_token_seconds[c];
      out << ' ' << format_9_digits(100.0 * cumulative / bin.capacity_token_seconds);
    }
    // Hits over the prompt tokens admissions looked up (hits plus those computed).
    const double looked_up = bin.cached_tokens + bin.prefill_tokens;
    out << ' ' << format_9_digits(looked_up > 0 ? 100.0 * bin.cached_tokens / looked_up : 0.0);
    out << '\n';
  }
  close_output_file(out, data);

  const std::string kv_body =
      "set title \"KV cache memory over time (all replicas, time-weighted)\"\n"
      "set xlabel \"simulated time (s)\"\nset ylabel \"share of KV capacity (%)\"\n"
      "set yrange [0:100]\nset autoscale xfix\nset grid\nset key outside right top\n"
      "set style fill solid 0.85 noborder\n"
      "plot \"timeline.dat\" using 1:(0):3 with filledcurves title \"token states\", \\\n"
      "     \"\" using 1:3:4 with filledcurves title \"reserved\", \\\n"
      "     \"\" using 1:4:5 with filledcurves title \"internal fragmentation\", \\\n"
      "     \"\" using 1:5:6 with filledcurves title \"external fragmentation\", \\\n"
      "     \"\" using 1:6:7 with filledcurves title \"free\", \\\n"
      "     \"\" using 1:7:8 with filledcurves title \"cached\"\n";
  const std::string batch_body =
      "set title \"Batch size over time (mean per iteration, all replicas)\"\n"
      "set xlabel \"simulated time (s)\"\nset ylabel \"requests in the batch\"\n"
      "set yrange [0:*]\nset autoscale xfix\nset grid\nset key top right\n"
      "plot \"timeline.dat\" using 1:2 with lines lw 2 title \"mean batch size\"\n";
  std::vector<Figure> figures{Figure{"kv_memory", kv_body, 1100, 560},
                              Figure{"batch_size", batch_body}};
  if (cached_total > 0) {
    figures.push_back(Figure{
        "prefix_cache_hit_rate",
        "set title \"Prefix-cache hit rate over time (prompt tokens, all replicas)\"\n"
        "set xlabel \"simulated time (s)\"\nset ylabel \"cached / (cached + computed) (%)\"\n"
        "set yrange [0:100]\nset autoscale xfix\nset grid\nset key top right\n"
        "plot \"timeline.dat\" using 1:9 with lines lw 2 title \"hit rate\"\n"});
  }
  return figures;
}

}  // namespace

std::vector<Figure> write_run_figures(const std::filesystem::path& run_dir,
                                      const RunFigureData& data) {
  std::vector<Figure> figures;
  if (auto cdf = latency_cdf(run_dir, data)) figures.push_back(*cdf);
  if (auto parts = ttft_breakdown(run_dir, data)) figures.push_back(*parts);
  for (auto& figure : time_series(run_dir, data))
    figures.push_back(std::move(figure));
  for (const auto& figure : figures)
    write_figure_script(run_dir, figure);
  return figures;
}

std::vector<Figure> write_run_figures(const std::filesystem::path& run_dir) {
  RunFigureData data;
  read_run_figure_files(run_dir, data);
  return write_run_figures(run_dir, data);
}

}  // namespace servesim
