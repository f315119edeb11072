#include "sim/study/run_plots.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <variant>

#include "sim/core/error.h"
#include "sim/metrics/csv_format.h"
#include "sim/metrics/output_file.h"
#include "sim/metrics/record_columns.h"
#include "sim/metrics/run_summary.h"
#include "sim/study/gnuplot.h"
#include "sim/workload/csv_cursor.h"

namespace servesim {
namespace {

constexpr std::size_t kMaxBins = 400;
constexpr std::size_t kMaxQuantiles = 500;

// The rows of requests.csv or iterations.csv, one at a time, columns by header name: read
// from the file, or from the records a run kept in memory (the same numbers either way).
class RowSource {
 public:
  virtual ~RowSource() = default;
  virtual bool next() = 0;
  virtual bool has(const std::string& name) const = 0;
  virtual std::size_t column(const std::string& name) const = 0;
  virtual bool empty_at(std::size_t index) const = 0;
  virtual double number(std::size_t index, std::string_view name) const = 0;
};

// The columns of a CSV file that servesim wrote, by header name.
class CsvTable final : public RowSource {
 public:
  explicit CsvTable(const std::filesystem::path& path)
      : text_(read_text_file(path)), cursor_(text_, path.string()) {
    if (!cursor_.next_line()) return;
    for (std::size_t i = 0; i < cursor_.fields().size(); ++i)
      columns_[std::string(cursor_.fields()[i])] = i;
  }
  bool next() override { return cursor_.next_line(); }
  bool has(const std::string& name) const override { return columns_.contains(name); }
  std::size_t column(const std::string& name) const override {
    const auto it = columns_.find(name);
    if (it == columns_.end()) cursor_.fail("no column \"" + name + "\" in the header");
    return it->second;
  }
  bool empty_at(std::size_t index) const override {
    return index >= cursor_.fields().size() || cursor_.fields()[index].empty();
  }
  double number(std::size_t index, std::string_view name) const override {
    return cursor_.finite_number(index, name);
  }

 private:
  std::string text_;
  CsvCursor cursor_;
  std::map<std::string, std::size_t> columns_;
};

// The records a run kept, as the file that lists them would read back: rows in the file's
// order, each cell the value reading it gives (written_value: 9-digit columns rounded), so
// that figures drawn from memory equal those drawn from the files, without writing and
// parsing them (a million iterations are 100 MB of CSV). `extra` adds columns after the
// record's own, as requests.csv's TTFT parts.
template <class Record>
class RecordRows final : public RowSource {
 public:
  using Extra = std::function<Cell(const Record&, std::size_t)>;
  RecordRows(const std::vector<Record>& records, std::vector<std::size_t> order,
             std::span<const RecordColumn<Record>> columns,
             std::vector<std::string> extra_names = {}, Extra extra = {})
      : records_(records),
        order_(std::move(order)),
        columns_(columns),
        extra_names_(std::move(extra_names)),
        extra_(std::move(extra)) {}
  bool next() override { return ++row_ < order_.size(); }
  bool has(const std::string& name) const override { return find(name).has_value(); }
  std::size_t column(const std::string& name) const override {
    const auto index = find(name);
    if (!index) throw InvariantError("run figures: no column \"" + name + "\" in the records");
    return *index;
  }
  bool empty_at(std::size_t index) const override {
    return std::holds_alternative<std::monostate>(cell(index));
  }
  double number(std::size_t index, std::string_view) const override {
    const Cell value = cell(index);
    if (const auto* integer = std::get_if<std::int64_t>(&value))
      return static_cast<double>(*integer);
    const CellFormat format =
        index < columns_.size() ? columns_[index].format : CellFormat::NineDigits;
    return written_value(std::get<double>(value), format);
  }

 private:
  std::optional<std::size_t> find(const std::string& name) const {
    for (std::size_t i = 0; i < columns_.size(); ++i) {
      if (name == columns_[i].name) return i;
    }
    for (std::size_t i = 0; i < extra_names_.size(); ++i) {
      if (name == extra_names_[i]) return columns_.size() + i;
    }
    return std::nullopt;
  }
  Cell cell(std::size_t index) const {
    const Record& record = records_[order_[row_]];
    return index < columns_.size() ? columns_[index].cell(record)
                                   : extra_(record, index - columns_.size());
  }

  const std::vector<Record>& records_;
  std::vector<std::size_t> order_;
  std::span<const RecordColumn<Record>> columns_;
  std::vector<std::string> extra_names_;
  Extra extra_;
  std::size_t row_ = static_cast<std::size_t>(-1);  // before the first row
};

// (value, cumulative share) pairs of a sorted sample, at most kMaxQuantiles of them.
void write_cdf_block(std::ostream& out, std::vector<double> values, double scale) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  const std::size_t step = std::max<std::size_t>(1, n / kMaxQuantiles);
  for (std::size_t i = 0; i < n; i += step) {
    out << format_9_digits(values[i] * scale) << ' '
        << format_9_digits(static_cast<double>(i + 1) / static_cast<double>(n)) << '\n';
  }
  if (n > 0 && (n - 1) % step != 0) out << format_9_digits(values.back() * scale) << " 1\n";
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

CdfAxis cdf_axis(const std::vector<double>& seconds) {
  CdfAxis axis;
  if (seconds.empty()) return axis;
  const auto [low, high] = std::minmax_element(seconds.begin(), seconds.end());
  if (*high >= 10) axis = {1, "s", false, 0};
  axis.log = spans_log_range(seconds);
  if (!axis.log) axis.tick = nice_tick((*high - *low) * axis.scale);
  return axis;
}

std::string cdf_panel(const CdfAxis& axis, const char* name, const char* title) {
  return std::string(axis.log ? "set logscale x\nset xtics autofreq\n" : "unset logscale x\n") +
         (axis.tick > 0 ? "set xtics " + format_9_digits(axis.tick) + "\n" : "") + "set xlabel \"" +
         name + " (" + axis.unit + (axis.log ? ", log scale" : "") + ")\"\nset title \"" + title +
         "\"\n";
}

std::optional<Figure> latency_cdf(const std::filesystem::path& dir, RowSource& table) {
  const auto ttft = table.column("ttft_s");
  const auto tpot = table.column("tpot_s");
  const auto rejected = table.column("rejected");
  std::vector<double> ttft_s, tpot_s;
  while (table.next()) {
    if (!table.empty_at(rejected) && table.number(rejected, "rejected") != 0) continue;
    if (!table.empty_at(ttft)) ttft_s.push_back(table.number(ttft, "ttft_s"));
    if (!table.empty_at(tpot)) tpot_s.push_back(table.number(tpot, "tpot_s"));
  }
  if (ttft_s.empty()) return std::nullopt;
  const auto data = dir / "latency_cdf.dat";
  auto out = open_output_file(data);
  const CdfAxis ttft_axis = cdf_axis(ttft_s), tpot_axis = cdf_axis(tpot_s);
  out << "# TTFT (" << ttft_axis.unit << ") and cumulative share of completed requests, then TPOT ("
      << tpot_axis.unit << ")\n";
  write_cdf_block(out, ttft_s, ttft_axis.scale);
  write_cdf_block(out, tpot_s, tpot_axis.scale);
  close_output_file(out, data);
  std::string body =
      "set multiplot layout 1,2 title \"Latency distribution over completed requests\"\n"
      "set grid\nset key top left\nset yrange [0:1]\n"
      "set ylabel \"fraction of requests\"\n" +
      cdf_panel(ttft_axis, "TTFT", "Time to first token") +
      "plot \"latency_cdf.dat\" index 0 using 1:2 with lines lw 2 " + series_colour(0) +
      " title \"TTFT\"\n" + cdf_panel(tpot_axis, "TPOT", "Time per output token");
  body += tpot_s.empty() ? "plot NaN title \"no request had 2+ output tokens\"\n"
                         : "plot \"latency_cdf.dat\" index 1 using 1:2 with lines lw 2 " +
                               series_colour(1) + " title \"TPOT\"\n";
  return Figure{"latency_cdf", body, 1100, 480};
}

// A disaggregated run's TTFT in its parts (requests.csv's ttft_PART_s columns), stacked, as
// means over requests grouped by prompt length: ten groups of equal count, shortest first.
std::optional<Figure> ttft_breakdown(const std::filesystem::path& dir, RowSource& table) {
  if (!table.has("ttft_prefill_queue_s")) return std::nullopt;
  std::array<std::size_t, kTtftParts> columns{};
  for (std::size_t i = 0; i < kTtftParts; ++i)
    columns[i] = table.column(std::string("ttft_") + kTtftPartNames[i] + "_s");
  const auto prompt = table.column("prompt_tokens");
  std::vector<std::pair<double, std::array<double, kTtftParts>>> rows;
  while (table.next()) {
    if (table.empty_at(columns[0])) continue;  // rejected, or prefilled where decoded
    std::array<double, kTtftParts> parts{};
    for (std::size_t i = 0; i < kTtftParts; ++i)
      parts[i] = table.number(columns[i], kTtftPartNames[i]);
    rows.emplace_back(table.number(prompt, "prompt_tokens"), parts);
  }
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

// Iterations binned by start time; sums weighted by iteration duration.
struct Bin {
  // token states, reserved, internal, external, free, cached
  std::array<double, 6> kv_token_seconds{};
  double capacity_token_seconds = 0;
  double cached_tokens = 0;   // prompt tokens admissions found in the prefix cache
  double prefill_tokens = 0;  // prompt tokens computed
  double batch_seconds = 0;
  double seconds = 0;
};

std::vector<Figure> time_series(const std::filesystem::path& dir, RowSource& table) {
  struct Row {
    double start_s, duration_s, batch, capacity, cached, prefill;
    std::array<double, 6> kv;
  };
  std::vector<Row> rows;
  {
    const std::array<const char*, 6> names{
        "kv_token_states",           "kv_reserved", "kv_internal_fragmentation",
        "kv_external_fragmentation", "kv_free",     "kv_cached"};
    // A file written before prefix caching has no cached column (nor hits).
    const bool caching = table.has("kv_cached") && table.has("cached_tokens");
    std::array<std::size_t, 6> kv{};
    for (std::size_t c = 0; c < (caching ? 6 : 5); ++c)
      kv[c] = table.column(names[c]);
    const auto cached = caching ? table.column("cached_tokens") : 0;
    const auto prefill = table.column("prefill_tokens");
    const auto start = table.column("start_s");
    const auto duration = table.column("duration_s");
    const auto batch = table.column("batch_size");
    const auto capacity = table.column("kv_capacity_tokens");
    while (table.next()) {
      Row row{table.number(start, "start_s"),
              table.number(duration, "duration_s"),
              table.number(batch, "batch_size"),
              table.number(capacity, "kv_capacity_tokens"),
              caching ? table.number(cached, "cached_tokens") : 0.0,
              table.number(prefill, "prefill_tokens"),
              {}};
      for (std::size_t c = 0; c < (caching ? 6 : 5); ++c)
        row.kv[c] = table.number(kv[c], names[c]);
      rows.push_back(row);
    }
  }
  if (rows.empty()) return {};
  double end_s = 0;
  for (const auto& row : rows)
    end_s = std::max(end_s, row.start_s + row.duration_s);
  const std::size_t bins = std::min(kMaxBins, rows.size());
  const double width_s = end_s > 0 ? end_s / static_cast<double>(bins) : 1.0;
  std::vector<Bin> binned(bins);
  double cached_total = 0;
  for (const auto& row : rows) {
    const auto b = std::min(bins - 1, static_cast<std::size_t>(row.start_s / width_s));
    Bin& bin = binned[b];
    for (std::size_t c = 0; c < 6; ++c)
      bin.kv_token_seconds[c] += row.kv[c] * row.duration_s;
    bin.cached_tokens += row.cached;
    bin.prefill_tokens += row.prefill;
    cached_total += row.cached;
    bin.capacity_token_seconds += row.capacity * row.duration_s;
    bin.batch_seconds += row.batch * row.duration_s;
    bin.seconds += row.duration_s;
  }
  const auto data = dir / "timeline.dat";
  auto out = open_output_file(data);
  out << "# time_s mean_batch_size, then cumulative KV shares (%): token_states +reserved "
         "+internal +external +free +cached, then the prefix-cache hit rate (%)\n";
  for (std::size_t b = 0; b < bins; ++b) {
    const Bin& bin = binned[b];
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

// The figures of a run from its requests' and iterations' rows (either may be absent).
std::vector<Figure> run_figures(const std::filesystem::path& run_dir,
                                const std::function<std::unique_ptr<RowSource>()>& requests,
                                const std::function<std::unique_ptr<RowSource>()>& iterations) {
  std::vector<Figure> figures;
  if (auto table = requests()) {
    if (auto cdf = latency_cdf(run_dir, *table)) figures.push_back(*cdf);
  }
  if (auto table = requests()) {
    if (auto parts = ttft_breakdown(run_dir, *table)) figures.push_back(*parts);
  }
  if (auto table = iterations()) {
    for (auto& figure : time_series(run_dir, *table))
      figures.push_back(std::move(figure));
  }
  for (const auto& figure : figures)
    write_figure_script(run_dir, figure);
  return figures;
}

}  // namespace

std::vector<Figure> write_run_figures(const std::filesystem::path& run_dir) {
  const auto file = [&](const char* name) {
    return [path = run_dir / name]() -> std::unique_ptr<RowSource> {
      if (!std::filesystem::exists(path)) return nullptr;
      return std::make_unique<CsvTable>(path);
    };
  };
  return run_figures(run_dir, file("requests.csv"), file("iterations.csv"));
}

std::vector<Figure> write_run_figures(const std::filesystem::path& run_dir,
                                      const MetricsCollector& collector) {
  const MetricsOptions& kept = collector.options();
  const auto requests = [&]() -> std::unique_ptr<RowSource> {
    if (!kept.keep_request_records) return nullptr;
    const auto& records = collector.request_records();
    std::vector<std::string> parts;
    for (std::size_t i = 0; collector.has_ttft_parts() && i < kTtftParts; ++i)
      parts.push_back(ttft_part_column(i));
    return std::make_unique<RecordRows<RequestRecord>>(
        records, request_file_order(records), request_columns(), std::move(parts),
        [&collector](const RequestRecord& r, std::size_t part) -> Cell {
          const auto* values = collector.ttft_parts(r.id);
          return values != nullptr ? Cell((*values)[part]) : Cell();
        });
  };
  const auto iterations = [&]() -> std::unique_ptr<RowSource> {
    if (!kept.keep_iteration_records) return nullptr;
    const auto& records = collector.iteration_records();
    return std::make_unique<RecordRows<IterationRecord>>(records, iteration_file_order(records),
                                                         iteration_columns());
  };
  return run_figures(run_dir, requests, iterations);
}

}  // namespace servesim
