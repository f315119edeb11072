#include "sim/metrics/record_columns.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <limits>
#include <numeric>
#include <string>

#include "sim/metrics/csv_format.h"

namespace servesim {
namespace {

using RequestColumn = RecordColumn<RequestRecord>;
using IterationColumn = RecordColumn<IterationRecord>;

// A rejected request was never served: it has no service times and no latencies.
Cell if_served(const RequestRecord& r, double value) {
  return r.rejected ? Cell() : Cell(value);
}

constexpr RequestColumn kRequestColumns[] = {
    {"id", CellFormat::Integer, [](const RequestRecord& r) -> Cell { return r.id; }},
    {"replica", CellFormat::Integer,
     [](const RequestRecord& r) -> Cell { return std::int64_t{r.replica}; }},
    {"arrival_s", CellFormat::RoundTrip,
     [](const RequestRecord& r) -> Cell { return r.arrival_s; }},
    {"first_scheduled_s", CellFormat::RoundTrip,
     [](const RequestRecord& r) { return if_served(r, r.first_scheduled_s); }},
    {"first_token_s", CellFormat::RoundTrip,
     [](const RequestRecord& r) { return if_served(r, r.first_token_s); }},
    {"completion_s", CellFormat::RoundTrip,
     [](const RequestRecord& r) { return if_served(r, r.completion_s); }},
    {"prompt_tokens", CellFormat::Integer,
     [](const RequestRecord& r) -> Cell { return r.prompt_tokens; }},
    {"output_tokens", CellFormat::Integer,
     [](const RequestRecord& r) -> Cell { return r.output_tokens; }},
    {"requested_output_tokens", CellFormat::Integer,
     [](const RequestRecord& r) -> Cell { return r.requested_output_tokens(); }},
    {"cut_output_tokens", CellFormat::Integer,
     [](const RequestRecord& r) -> Cell { return r.cut_output_tokens; }},
    {"preemptions", CellFormat::Integer,
     [](const RequestRecord& r) -> Cell { return std::int64_t{r.preemptions}; }},
    {"ttft_s", CellFormat::NineDigits,
     [](const RequestRecord& r) { return if_served(r, r.first_token_s - r.arrival_s); }},
    // Empty for a single-token request, whose TPOT is undefined (see docs/metrics.md).
    {"tpot_s", CellFormat::NineDigits,
     [](const RequestRecord& r) -> Cell {
       if (r.rejected || r.output_tokens <= 1) return {};
       return (r.completion_s - r.first_token_s) / static_cast<double>(r.output_tokens - 1);
     }},
    {"e2e_s", CellFormat::NineDigits,
     [](const RequestRecord& r) { return if_served(r, r.completion_s - r.arrival_s); }},
    {"rejected", CellFormat::Integer,
     [](const RequestRecord& r) -> Cell { return std::int64_t{r.rejected ? 1 : 0}; }},
    {"reject_reason", CellFormat::Text,
     [](const RequestRecord& r) -> Cell { return r.rejected ? Cell(r.reject_reason) : Cell(); }},
    // Last, so that the columns before it keep their places in files read by position.
    {"cached_tokens", CellFormat::Integer,
     [](const RequestRecord& r) -> Cell { return r.cached_tokens; }},
};

constexpr IterationColumn kIterationColumns[] = {
    {"replica", CellFormat::Integer,
     [](const IterationRecord& it) -> Cell { return std::int64_t{it.replica}; }},
    {"start_s", CellFormat::RoundTrip,
     [](const IterationRecord& it) -> Cell { return it.start_s; }},
    {"duration_s", CellFormat::RoundTrip,
     [](const IterationRecord& it) -> Cell { return it.duration_s; }},
    {"batch_size", CellFormat::Integer,
     [](const IterationRecord& it) -> Cell { return std::int64_t{it.batch_size}; }},
    {"prefill_tokens", CellFormat::Integer,
     [](const IterationRecord& it) -> Cell { return it.prefill_tokens; }},
    {"decode_tokens", CellFormat::Integer,
     [](const IterationRecord& it) -> Cell { return it.decode_tokens; }},
    {"preempted", CellFormat::Integer,
     [](const IterationRecord& it) -> Cell { return std::int64_t{it.preempted}; }},
    {"kv_used_tokens", CellFormat::Integer,
     [](const IterationRecord& it) -> Cell { return it.kv_used_tokens; }},
    {"kv_capacity_tokens", CellFormat::Integer,
     [](const IterationRecord& it) -> Cell { return it.kv_capacity_tokens; }},
    {"kv_utilization", CellFormat::NineDigits,
     [](const IterationRecord& it) -> Cell { return it.kv_utilization(); }},
    {"kv_token_states", CellFormat::Integer,
     [](const IterationRecord& it) -> Cell { return it.kv_memory.token_states; }},
    {"kv_reserved", CellFormat::Integer,
     [](const IterationRecord& it) -> Cell { return it.kv_memory.reserved; }},
    {"kv_internal_fragmentation", CellFormat::Integer,
     [](const IterationRecord& it) -> Cell { return it.kv_memory.internal_fragmentation; }},
    {"kv_external_fragmentation", CellFormat::Integer,
     [](const IterationRecord& it) -> Cell { return it.kv_memory.external_fragmentation; }},
    {"kv_free", CellFormat::Integer,
     [](const IterationRecord& it) -> Cell { return it.kv_memory.free; }},
    {"kv_cached", CellFormat::Integer,
     [](const IterationRecord& it) -> Cell { return it.kv_memory.cached; }},
    {"cached_tokens", CellFormat::Integer,
     [](const IterationRecord& it) -> Cell { return it.cached_tokens; }},
    {"prefill_sequences", CellFormat::Integer,
     [](const IterationRecord& it) -> Cell { return it.prefill_sequences; }},
    {"prefill_context_tokens", CellFormat::Integer,
     [](const IterationRecord& it) -> Cell { return it.prefill_context_tokens; }},
    {"prefill_attention_pairs", CellFormat::RoundTrip,
     [](const IterationRecord& it) -> Cell { return it.prefill_attention_pairs; }},
    {"prefill_masked_pairs", CellFormat::RoundTrip,
     [](const IterationRecord& it) -> Cell { return it.prefill_masked_pairs; }},
    {"decode_context_tokens", CellFormat::Integer,
     [](const IterationRecord& it) -> Cell { return it.decode_context_tokens; }},
    {"sampled_sequences", CellFormat::Integer,
     [](const IterationRecord& it) -> Cell { return it.sampled_sequences; }},
};

}  // namespace

std::span<const RecordColumn<RequestRecord>> request_columns() {
  return kRequestColumns;
}

std::span<const RecordColumn<IterationRecord>> iteration_columns() {
  return kIterationColumns;
}

// Records arrive in completion order; sorting an index keeps the records untouched, and a
// stable sort keeps the output deterministic even if ids repeat.
std::vector<std::size_t> request_file_order(const std::vector<RequestRecord>& records) {
  std::vector<std::size_t> order(records.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&records](std::size_t a, std::size_t b) {
    return records[a].id < records[b].id;
  });
  return order;
}

std::vector<std::size_t> iteration_file_order(const std::vector<IterationRecord>& records) {
  std::vector<std::size_t> order(records.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&records](std::size_t a, std::size_t b) {
    if (records[a].start_s != records[b].start_s) return records[a].start_s < records[b].start_s;
    return records[a].replica < records[b].replica;
  });
  return order;
}

namespace {

template <class Record>
ColumnValues column_values(const RecordColumn<Record>& column, const std::vector<Record>& records,
                           const std::vector<std::size_t>& order) {
  ColumnValues result{column.name, {}};
  if (column.format == CellFormat::Text) {
    std::vector<std::optional<std::string>> texts;
    texts.reserve(order.size());
    for (std::size_t index : order) {
      Cell cell = column.cell(records[index]);
      if (auto* text = std::get_if<std::string>(&cell)) {
        texts.emplace_back(std::move(*text));
      } else {
        texts.emplace_back();
      }
    }
    result.values = std::move(texts);
    return result;
  }
  std::vector<Cell> cells;
  cells.reserve(order.size());
  bool any_empty = false;
  for (std::size_t index : order) {
    cells.push_back(column.cell(records[index]));
    any_empty = any_empty || std::holds_alternative<std::monostate>(cells.back());
  }
  if (column.format == CellFormat::Integer && !any_empty) {
    std::vector<std::int64_t> integers;
    integers.reserve(cells.size());
    for (const Cell& cell : cells)
      integers.push_back(std::get<std::int64_t>(cell));
    result.values = std::move(integers);
    return result;
  }
  std::vector<double> reals;
  reals.reserve(cells.size());
  for (const Cell& cell : cells) {
    if (const auto* integer = std::get_if<std::int64_t>(&cell)) {
      reals.push_back(static_cast<double>(*integer));
    } else if (const auto* real = std::get_if<double>(&cell)) {
      reals.push_back(written_value(*real, column.format));
    } else {
      reals.push_back(std::numeric_limits<double>::quiet_NaN());
    }
  }
  result.values = std::move(reals);
  return result;
}

template <class Record>
std::vector<ColumnValues> table(std::span<const RecordColumn<Record>> columns,
                                const std::vector<Record>& records,
                                const std::vector<std::size_t>& order) {
  std::vector<ColumnValues> result;
  for (const auto& column : columns)
    result.push_back(column_values(column, records, order));
  return result;
}

}  // namespace

std::vector<ColumnValues> request_table(const std::vector<RequestRecord>& records) {
  return table(request_columns(), records, request_file_order(records));
}

std::string ttft_part_column(std::size_t part) {
  return std::string("ttft_") + kTtftPartNames[part] + "_s";
}

std::vector<ColumnValues> ttft_part_table(const MetricsCollector& collector) {
  const std::vector<RequestRecord>& records = collector.request_records();
  const std::vector<std::size_t> order = request_file_order(records);
  std::vector<ColumnValues> result;
  for (std::size_t part = 0; part < kTtftParts; ++part) {
    std::vector<double> values;
    values.reserve(order.size());
    for (const std::size_t index : order) {
      const auto* parts = collector.ttft_parts(records[index].id);
      values.push_back(parts != nullptr ? written_value((*parts)[part], CellFormat::NineDigits)
                                        : std::numeric_limits<double>::quiet_NaN());
    }
    result.push_back({ttft_part_column(part), std::move(values)});
  }
  return result;
}

std::vector<ColumnValues> iteration_table(const std::vector<IterationRecord>& records) {
  return table(iteration_columns(), records, iteration_file_order(records));
}

namespace {

// Writes number cells one after another, each followed by a comma.
class CellWriter {
 public:
  explicit CellWriter(char* first) : out_(first) {}
  void integer(std::int64_t value) {
    // Many integers are single digits (a decode step's prefill columns are 0).
    if (static_cast<std::uint64_t>(value) < 10) {
      *out_++ = static_cast<char>('0' + value);
    } else {
      out_ = std::to_chars(out_, out_ + kMaxNumberCellChars, value).ptr;
    }
    *out_++ = ',';
  }
  void round_trip(double value) {
    out_ = write_round_trip(out_, value);
    *out_++ = ',';
  }
  void nine_digits(double value) {
    out_ = write_9_digits(out_, value);
    *out_++ = ',';
  }
  void empty() { *out_++ = ','; }
  // The end of the cells, without the last comma.
  char* end() const { return out_ - 1; }

 private:
  char* out_;
};

}  // namespace

char* write_iteration_cells(char* first, const IterationRecord& it) {
  CellWriter cells(first);
  cells.integer(it.replica);
  cells.round_trip(it.start_s);
  cells.round_trip(it.duration_s);
  cells.integer(it.batch_size);
  cells.integer(it.prefill_tokens);
  cells.integer(it.decode_tokens);
  cells.integer(it.preempted);
  cells.integer(it.kv_used_tokens);
  cells.integer(it.kv_capacity_tokens);
  cells.nine_digits(it.kv_utilization());
  cells.integer(it.kv_memory.token_states);
  cells.integer(it.kv_memory.reserved);
  cells.integer(it.kv_memory.internal_fragmentation);
  cells.integer(it.kv_memory.external_fragmentation);
  cells.integer(it.kv_memory.free);
  cells.integer(it.kv_memory.cached);
  cells.integer(it.cached_tokens);
  cells.integer(it.prefill_sequences);
  cells.integer(it.prefill_context_tokens);
  cells.round_trip(it.prefill_attention_pairs);
  cells.round_trip(it.prefill_masked_pairs);
  cells.integer(it.decode_context_tokens);
  cells.integer(it.sampled_sequences);
  return cells.end();
}

char* write_served_request_cells(char* first, const RequestRecord& r) {
  CellWriter cells(first);
  cells.integer(r.id);
  cells.integer(r.replica);
  cells.round_trip(r.arrival_s);
  cells.round_trip(r.first_scheduled_s);
  cells.round_trip(r.first_token_s);
  cells.round_trip(r.completion_s);
  cells.integer(r.prompt_tokens);
  cells.integer(r.output_tokens);
  cells.integer(r.requested_output_tokens());
  cells.integer(r.cut_output_tokens);
  cells.integer(r.preemptions);
  cells.nine_digits(r.first_token_s - r.arrival_s);
  if (r.output_tokens > 1) {
    cells.nine_digits((r.completion_s - r.first_token_s) /
                      static_cast<double>(r.output_tokens - 1));
  } else {
    cells.empty();
  }
  cells.nine_digits(r.completion_s - r.arrival_s);
  cells.integer(0);  // rejected
  cells.empty();     // reject_reason
  cells.integer(r.cached_tokens);
  return cells.end();
}

std::string cell_text(const Cell& cell, CellFormat format) {
  if (const auto* integer = std::get_if<std::int64_t>(&cell)) return std::to_string(*integer);
  if (const auto* real = std::get_if<double>(&cell)) {
    return format == CellFormat::NineDigits ? format_9_digits(*real) : format_round_trip(*real);
  }
  if (const auto* text = std::get_if<std::string>(&cell)) return *text;
  return {};
}

char* write_number_cell(char* first, const Cell& cell, CellFormat format) {
  char* const last = first + kMaxNumberCellChars;  // any int64 or double in either format
  if (const auto* integer = std::get_if<std::int64_t>(&cell))
    return std::to_chars(first, last, *integer).ptr;
  if (const auto* real = std::get_if<double>(&cell)) {
    return format == CellFormat::NineDigits ? write_9_digits(first, *real)
                                            : write_round_trip(first, *real);
  }
  return first;  // empty
}

void append_cell_text(std::string& out, const Cell& cell, CellFormat format) {
  if (const auto* text = std::get_if<std::string>(&cell)) {
    out += *text;
    return;
  }
  std::array<char, kMaxNumberCellChars> buffer{};
  out.append(buffer.data(), write_number_cell(buffer.data(), cell, format));
}

double written_value(double value, CellFormat format) {
  if (format != CellFormat::NineDigits) return value;
  const std::string text = format_9_digits(value);
  double read = 0;
  std::from_chars(text.data(), text.data() + text.size(), read);
  return read;
}

}  // namespace servesim
