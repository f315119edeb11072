#include "sim/study/run_plots.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
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

constexpr std::size_t kMaxQuantiles = 500;

// The columns of a CSV file that servesim wrote, by header name.
class CsvTable final {
 public:
  explicit CsvTable(const std::filesystem::path& path)
      : text_(read_text_file(path)), cursor_(text_, path.string()) {
    if (!cursor_.next_line()) return;
    for (std::size_t i = 0; i < cursor_.fields().size(); ++i)
      columns_[std::string(cursor_.fields()[i])] = i;
  }
  bool next() { return cursor_.next_line(); }
  bool has(const std::string& name) const { return columns_.contains(name); }
  std::size_t column(const std::string& name) const {
    const auto it = columns_.find(name);
    if (it == columns_.end()) cursor_.fail("no column \"" + name + "\" in the header");
    return it->second;
  }
  bool empty_at(std::size_t index) const {
    return index >= cursor_.fields().size() || cursor_.fields()[index].empty();
  }
  double number(std::size_t index, std::string_view name) const {
    return cursor_.finite_number(index, name);
  }
  std::optional<double> optional_number(std::size_t index, std::string_view name) const {
    if (empty_at(index)) return std::nullopt;
    return number(index, name);
  }

 private:
  std::string text_;
  CsvCursor cursor_;
  std::map<std::string, std::size_t> columns_;
};

constexpr std::array<const char*, 6> kKvColumns{
    "kv_token_states",           "kv_reserved", "kv_internal_fragmentation",
    "kv_external_fragmentation", "kv_free",     "kv_cached"};

// requests.csv's rows into `data`.
void read_requests(CsvTable& table, RunFigureData& data) {
  const auto ttft = table.column("ttft_s");
  const auto tpot = table.column("tpot_s");
  const auto rejected = table.column("rejected");
  const auto prompt = table.column("prompt_tokens");
  const bool parts = table.has("ttft_prefill_queue_s");
  std::array<std::size_t, kTtftParts> part_columns{};
  for (std::size_t i = 0; parts && i < kTtftParts; ++i)
    part_columns[i] = table.column(std::string("ttft_") + kTtftPartNames[i] + "_s");
  while (table.next()) {
    if (!table.empty_at(rejected) && table.number(rejected, "rejected") != 0) continue;
    data.add_latencies(table.optional_number(ttft, "ttft_s"),
                       table.optional_number(tpot, "tpot_s"));
    if (!parts || table.empty_at(part_columns[0])) continue;  // prefilled where decoded
    std::array<double, kTtftParts> values{};
    for (std::size_t i = 0; i < kTtftParts; ++i)
      values[i] = table.number(part_columns[i], kTtftPartNames[i]);
    data.add_ttft_parts(table.number(prompt, "prompt_tokens"), values);
  }
}

// iterations.csv's rows into `data`.
void read_iterations(CsvTable& table, RunFigureData& data) {
  // A file written before prefix caching has no cached column (nor hits).
  const bool caching = table.has("kv_cached") && table.has("cached_tokens");
  const std::size_t kv_count = caching ? 6 : 5;
  std::array<std::size_t, 6> kv{};
  for (std::size_t c = 0; c < kv_count; ++c)
    kv[c] = table.column(kKvColumns[c]);
  const auto cached = caching ? table.column("cached_tokens") : 0;
  const auto prefill = table.column("prefill_tokens");
  const auto start = table.column("start_s");
  const auto duration = table.column("duration_s");
  const auto batch = table.column("batch_size");
  const auto capacity = table.column("kv_capacity_tokens");
  while (table.next()) {
    TimelineRow row{table.number(start, "start_s"),
                    table.number(duration, "duration_s"),
                    table.number(batch, "batch_size"),
                    table.number(capacity, "kv_capacity_tokens"),
                    caching ? table.number(cached, "cached_tokens") : 0.0,
                    table.number(prefill, "prefill_tokens"),
                    {}};
    for (std::size_t c = 0; c < kv_count; ++c)
      row.kv[c] = table.number(kv[c], kKvColumns[c]);
    data.add_iteration(row);
  }
}

// The column of `columns` named `name`.
template <class Record>
const RecordColumn<Record>& column_named(std::span<const RecordColumn<Record>> columns,
                                         std::string_view name) {
  for (const auto& column : columns) {
    if (name == column.name) return column;
  }
  throw InvariantError("run figures: no column \"" + std::string(name) + "\" in the records");
}

// The record columns the figures read, found once.
struct FigureColumns {
  const RecordColumn<RequestRecord>* ttft = nullptr;
  const RecordColumn<RequestRecord>* tpot = nullptr;
  // TimelineRow's fields in order, then kKvColumns.
  std::array<const RecordColumn<IterationRecord>*, 12> iteration{};
};

const FigureColumns& figure_columns() {
  static const FigureColumns columns = [] {
    FigureColumns found;
    found.ttft = &column_named(request_columns(), "ttft_s");
    found.tpot = &column_named(request_columns(), "tpot_s");
    const std::array<const char*, 6> fields{"start_s",       "duration_s",
                                            "batch_size",    "kv_capacity_tokens",
                                            "cached_tokens", "prefill_tokens"};
    for (std::size_t c = 0; c < fields.size(); ++c)
      found.iteration[c] = &column_named(iteration_columns(), fields[c]);
    for (std::size_t c = 0; c < kKvColumns.size(); ++c)
      found.iteration[6 + c] = &column_named(iteration_columns(), kKvColumns[c]);
    return found;
  }();
  return columns;
}

// A record's cell as reading the file gives it back: nullopt when empty.
template <class Record>
std::optional<double> read_back(const RecordColumn<Record>& column, const Record& record) {
  const Cell cell = column.cell(record);
  if (const auto* integer = std::get_if<std::int64_t>(&cell)) return static_cast<double>(*integer);
  if (const auto* real = std::get_if<double>(&cell)) return written_value(*real, column.format);
  return std::nullopt;
}

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

void RunFigureData::add_latencies(std::optional<double> ttft_s, std::optional<double> tpot_s) {
  if (ttft_s) ttft_s_.add(*ttft_s);
  if (tpot_s) tpot_s_.add(*tpot_s);
}

void RunFigureData::add_ttft_parts(double prompt_tokens,
                                   const std::array<double, kTtftParts>& parts_s) {
  parts_.emplace_back(prompt_tokens, parts_s);
}

void RunFigureData::add_iteration(const TimelineRow& row) {
  while (row.start_s >= bin_width_s_ * static_cast<double>(kTimelineBins)) {
    for (std::size_t b = 0; b < kTimelineBins; ++b) {
      Bin merged;
      if (2 * b < kTimelineBins) {
        merged = bins_[2 * b];
        merged += bins_[2 * b + 1];
      }
      bins_[b] = merged;
    }
    bin_width_s_ *= 2;
  }
  ++iterations_;
  const auto b = std::min(kTimelineBins - 1, static_cast<std::size_t>(row.start_s / bin_width_s_));
  Bin& bin = bins_[b];
  for (std::size_t c = 0; c < row.kv.size(); ++c)
    bin.kv_token_seconds[c] += row.kv[c] * row.duration_s;
  bin.cached_tokens += row.cached_tokens;
  bin.prefill_tokens += row.prefill_tokens;
  cached_total_ += row.cached_tokens;
  bin.capacity_token_seconds += row.kv_capacity_tokens * row.duration_s;
  bin.batch_seconds += row.batch_size * row.duration_s;
  bin.seconds += row.duration_s;
}

void RunFigureData::on_request(const RequestRecord& record,
                               const std::array<double, kTtftParts>* ttft_parts) {
  if (record.rejected) return;
  const FigureColumns& columns = figure_columns();
  add_latencies(read_back(*columns.ttft, record), read_back(*columns.tpot, record));
  if (ttft_parts == nullptr) return;
  std::array<double, kTtftParts> parts{};
  for (std::size_t i = 0; i < kTtftParts; ++i)
    parts[i] = written_value((*ttft_parts)[i], CellFormat::NineDigits);
  add_ttft_parts(static_cast<double>(record.prompt_tokens), parts);
}

TimelineRow timeline_row_from_columns(const IterationRecord& record) {
  const FigureColumns& columns = figure_columns();
  const auto value = [&](std::size_t c) {
    return read_back(*columns.iteration[c], record).value_or(0.0);
  };
  TimelineRow row{value(0), value(1), value(2), value(3), value(4), value(5), {}};
  for (std::size_t c = 0; c < kKvColumns.size(); ++c)
    row.kv[c] = value(6 + c);
  return row;
}

TimelineRow timeline_row(const IterationRecord& record) {
  const auto real = [](std::int64_t integer) { return static_cast<double>(integer); };
  const KvMemoryTokens& kv = record.kv_memory;
  return {record.start_s,
          record.duration_s,
          real(record.batch_size),
          real(record.kv_capacity_tokens),
          real(record.cached_tokens),
          real(record.prefill_tokens),
          {real(kv.token_states), real(kv.reserved), real(kv.internal_fragmentation),
           real(kv.external_fragmentation), real(kv.free), real(kv.cached)}};
}

void RunFigureData::on_iteration(const IterationRecord& record) {
  add_iteration(timeline_row(record));
}

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
  if (const auto path = run_dir / "requests.csv"; std::filesystem::exists(path)) {
    CsvTable table(path);
    read_requests(table, data);
  }
  if (const auto path = run_dir / "iterations.csv"; std::filesystem::exists(path)) {
    CsvTable table(path);
    read_iterations(table, data);
  }
  return write_run_figures(run_dir, data);
}

}  // namespace servesim
