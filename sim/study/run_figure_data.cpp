#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <variant>

#include "sim/core/error.h"
#include "sim/metrics/record_columns.h"
#include "sim/metrics/run_summary.h"
#include "sim/study/run_plots.h"
#include "sim/workload/csv_cursor.h"

namespace servesim {
namespace {

// The columns of a CSV file that servesim wrote, by header name.
class RunCsvTable final {
 public:
  explicit RunCsvTable(const std::filesystem::path& path)
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

constexpr std::array<const char*, 6> kTimelineKvColumns{
    "kv_token_states",           "kv_reserved", "kv_internal_fragmentation",
    "kv_external_fragmentation", "kv_free",     "kv_cached"};

// requests.csv's rows into `data`.
void read_requests_csv(RunCsvTable& table, RunFigureData& data) {
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
void read_iterations_csv(RunCsvTable& table, RunFigureData& data) {
  // A file written before prefix caching has no cached column (nor hits).
  const bool caching = table.has("kv_cached") && table.has("cached_tokens");
  const std::size_t kv_count = caching ? 6 : 5;
  std::array<std::size_t, 6> kv{};
  for (std::size_t c = 0; c < kv_count; ++c)
    kv[c] = table.column(kTimelineKvColumns[c]);
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
      row.kv[c] = table.number(kv[c], kTimelineKvColumns[c]);
    data.add_iteration(row);
  }
}

// The column of `columns` named `name`.
template <class Record>
const RecordColumn<Record>& record_column_named(std::span<const RecordColumn<Record>> columns,
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
  // TimelineRow's fields in order, then kTimelineKvColumns.
  std::array<const RecordColumn<IterationRecord>*, 12> iteration{};
};

const FigureColumns& figure_columns() {
  static const FigureColumns columns = [] {
    FigureColumns found;
    found.ttft = &record_column_named(request_columns(), "ttft_s");
    found.tpot = &record_column_named(request_columns(), "tpot_s");
    const std::array<const char*, 6> fields{"start_s",       "duration_s",
                                            "batch_size",    "kv_capacity_tokens",
                                            "cached_tokens", "prefill_tokens"};
    for (std::size_t c = 0; c < fields.size(); ++c)
      found.iteration[c] = &record_column_named(iteration_columns(), fields[c]);
    for (std::size_t c = 0; c < kTimelineKvColumns.size(); ++c)
      found.iteration[6 + c] = &record_column_named(iteration_columns(), kTimelineKvColumns[c]);
    return found;
  }();
  return columns;
}

// A record's cell as reading the file gives it back: nullopt when empty.
template <class Record>
std::optional<double> cell_read_back(const RecordColumn<Record>& column, const Record& record) {
  const Cell cell = column.cell(record);
  if (const auto* integer = std::get_if<std::int64_t>(&cell)) return static_cast<double>(*integer);
  if (const auto* real = std::get_if<double>(&cell)) return written_value(*real, column.format);
  return std::nullopt;
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
  add_latencies(cell_read_back(*columns.ttft, record), cell_read_back(*columns.tpot, record));
  if (ttft_parts == nullptr) return;
  std::array<double, kTtftParts> parts{};
  for (std::size_t i = 0; i < kTtftParts; ++i)
    parts[i] = written_value((*ttft_parts)[i], CellFormat::NineDigits);
  add_ttft_parts(static_cast<double>(record.prompt_tokens), parts);
}

TimelineRow timeline_row_from_columns(const IterationRecord& record) {
  const FigureColumns& columns = figure_columns();
  const auto value = [&](std::size_t c) {
    return cell_read_back(*columns.iteration[c], record).value_or(0.0);
  };
  TimelineRow row{value(0), value(1), value(2), value(3), value(4), value(5), {}};
  for (std::size_t c = 0; c < kTimelineKvColumns.size(); ++c)
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

void read_run_figure_files(const std::filesystem::path& run_dir, RunFigureData& data) {
  if (const auto path = run_dir / "requests.csv"; std::filesystem::exists(path)) {
    RunCsvTable table(path);
    read_requests_csv(table, data);
  }
  if (const auto path = run_dir / "iterations.csv"; std::filesystem::exists(path)) {
    RunCsvTable table(path);
    read_iterations_csv(table, data);
  }
}

}  // namespace servesim
