#include "sim/study/compare_plots.h"

#include <array>

#include "sim/metrics/csv_format.h"
#include "sim/metrics/output_file.h"
#include "sim/study/gnuplot.h"
#include "sim/study/summary_columns.h"

namespace servesim {
namespace {

// A label as a quoted field of a gnuplot data file (gnuplot has no escapes there).
std::string data_label(const std::string& label) {
  std::string quoted = "\"";
  for (const char c : label)
    quoted += c == '"' ? '\'' : c;
  return quoted + "\"";
}

Figure kv_breakdown(const std::vector<ComparedSummary>& runs, const std::filesystem::path& dir,
                    const std::string& title) {
  constexpr std::array<const char*, 6> keys{
      "token_states",           "reserved", "internal_fragmentation",
      "external_fragmentation", "free",     "cached"};
  constexpr std::array<const char*, 6> names{
      "KV token states",        "reserved", "internal fragmentation",
      "external fragmentation", "free",     "cached (prefix cache)"};
  const auto data = dir / "kv_breakdown.dat";
  auto out = open_output_file(data);
  out << "# index policy, then time-weighted shares (%) of KV memory: token_states reserved "
         "internal_fragmentation external_fragmentation free cached (each row sums to 100)\n";
  for (std::size_t i = 0; i < runs.size(); ++i) {
    std::array<double, 6> shares{};
    double total = 0;
    for (std::size_t k = 0; k < keys.size(); ++k) {
      shares[k] = summary_value(runs[i].summary, std::string("kv_memory.") + keys[k]);
      total += shares[k];
    }
    out << i << ' ' << data_label(runs[i].label);
    for (const double share : shares)
      out << ' ' << format_9_digits(total > 0 ? 100.0 * share / total : 0.0);
    out << '\n';
  }
  close_output_file(out, data);
  // The title on two lines: what is drawn, then what was held fixed.
  std::string body = "set title \"KV cache memory per policy\"" +
                     (title.empty() ? std::string() : " . \"\\n\" . " + gnuplot_quote(title)) +
                     "\nset ylabel \"share of KV memory (%)\"\nset yrange [0:100]\n"
                     "set style data histograms\nset style histogram rowstacked\n"
                     "set style fill solid 0.85 border -1\nset boxwidth 0.6\n"
                     "set grid ytics\nset key outside right center\nset xtics rotate by -20\n"
                     "plot ";
  for (std::size_t k = 0; k < names.size(); ++k) {
    body += (k == 0 ? "\"kv_breakdown.dat\" using " : ", \\\n     \"\" using ") +
            std::to_string(k + 3) + (k == 0 ? ":xtic(2)" : "") + " title " +
            gnuplot_quote(names[k]);
  }
  body += '\n';
  return Figure{"kv_breakdown", body, 1200, 700};
}

Figure latency_bars(const std::vector<ComparedSummary>& runs, const std::filesystem::path& dir,
                    const std::string& title) {
  const struct {
    const char* metric;
    const char* title;
    const char* ylabel;
  } panels[] = {{"ttft_s.mean", "Mean TTFT", "mean time to first token (ms)"},
                {"tpot_s.mean", "Mean TPOT", "mean time per output token (ms)"},
                {"normalized_latency_s_per_token", "Normalized latency",
                 "mean E2E / output tokens (ms/token)"}};
  const auto data = dir / "latency_bars.dat";
  auto out = open_output_file(data);
  out << "# index policy mean_ttft_ms mean_tpot_ms normalized_latency_ms_per_token\n";
  std::vector<std::vector<double>> values(std::size(panels));
  for (std::size_t i = 0; i < runs.size(); ++i) {
    out << i << ' ' << data_label(runs[i].label);
    for (std::size_t p = 0; p < std::size(panels); ++p) {
      values[p].push_back(summary_value(runs[i].summary, panels[p].metric) * 1e3);
      out << ' ' << format_9_digits(values[p].back());
    }
    out << '\n';
  }
  close_output_file(out, data);
  std::string body = "set multiplot layout 1,3 title " +
                     gnuplot_quote(title.empty() ? "Mean latency per policy"
                                                 : "Mean latency per policy, " + title) +
                     "\nset style fill solid 0.85 border -1\nset boxwidth 0.6\nset grid ytics\n"
                     "set xtics rotate by -30\nunset key\n";
  for (std::size_t p = 0; p < std::size(panels); ++p) {
    // Bars whose values span more than kLogSpan: a log axis, and each bar's value written on
    // it, since a log axis makes differences hard to read off.
    const bool log = spans_log_range(values[p]);
    const std::string column = std::to_string(p + 3);
    body += std::string(log ? "set logscale y\nset yrange [*:*]\n"
                            : "unset logscale y\nset yrange [0:*]\n") +
            "set title \"" + panels[p].title + "\"\nset ylabel \"" + panels[p].ylabel +
            "\"\nplot \"latency_bars.dat\" using 1:" + column + ":xtic(2) with boxes " +
            series_colour(p) +
            (log ? ", \\\n     \"\" using 1:" + column + ":($" + column +
                       " >= 1000 ? sprintf(\"%.0f\", $" + column + ") : sprintf(\"%.3g\", $" +
                       column + ")) with labels offset 0,0.7 font \",12\""
                 : "") +
            "\n";
  }
  return Figure{"latency_bars", body, 1800, 640};
}

}  // namespace

std::vector<Figure> write_compare_figures(const std::vector<ComparedSummary>& runs,
                                          const std::filesystem::path& dir,
                                          const std::string& title) {
  if (runs.empty()) return {};
  std::vector<Figure> figures{kv_breakdown(runs, dir, title), latency_bars(runs, dir, title)};
  for (const auto& figure : figures)
    write_figure_script(dir, figure);
  return figures;
}

}  // namespace servesim
