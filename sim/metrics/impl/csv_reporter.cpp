#include "sim/metrics/impl/csv_reporter.h"

#include <array>
#include <ostream>
#include <span>
#include <sstream>
#include <string>
#include <variant>

#include <nlohmann/json.hpp>

#include "sim/metrics/csv_format.h"
#include "sim/metrics/output_file.h"
#include "sim/metrics/record_columns.h"

namespace servesim {
namespace {

// A header line of the columns' names, without its line end.
template <class Record>
void write_header(std::ostream& out, std::span<const RecordColumn<Record>> columns) {
  for (std::size_t i = 0; i < columns.size(); ++i)
    out << (i == 0 ? "" : ",") << columns[i].name;
}

// One CSV row without its line end: each column's cell as text, texts quoted where RFC 4180
// asks.
template <class Record>
void write_row(std::ostream& out, std::span<const RecordColumn<Record>> columns,
               const Record& record) {
  for (std::size_t i = 0; i < columns.size(); ++i) {
    const RecordColumn<Record>& column = columns[i];
    if (i > 0) out << ',';
    const std::string text = cell_text(column.cell(record), column.format);
    out << (column.format == CellFormat::Text ? csv_field(text) : text);
  }
}

// The same cells as one JSON object: every number cell is already a JSON number as written,
// an empty cell is null, a text a JSON string.
std::string request_json_line(const RequestRecord& r) {
  std::string line = "{";
  bool first = true;
  for (const auto& column : request_columns()) {
    line += (first ? "\"" : ", \"") + std::string(column.name) + "\": ";
    first = false;
    const Cell cell = column.cell(r);
    if (std::holds_alternative<std::monostate>(cell)) {
      line += "null";
    } else if (column.format == CellFormat::Text) {
      line += nlohmann::json(cell_text(cell, column.format)).dump();
    } else {
      line += cell_text(cell, column.format);
    }
  }
  return line + "}";
}

}  // namespace

void write_requests_csv(const MetricsCollector& collector, const std::filesystem::path& path) {
  const auto& records = collector.request_records();
  auto out = open_output_file(path);
  // A disaggregated run's requests also have their TTFT in parts, in columns after the rest
  // (empty for a rejected request).
  const bool parts = collector.has_ttft_parts();
  write_header(out, request_columns());
  for (std::size_t i = 0; parts && i < kTtftParts; ++i)
    out << ',' << ttft_part_column(i);
  out << '\n';
  for (std::size_t index : request_file_order(records)) {
    write_row(out, request_columns(), records[index]);
    if (parts) {
      const std::array<double, kTtftParts>* values = collector.ttft_parts(records[index].id);
      for (std::size_t i = 0; i < kTtftParts; ++i) {
        out << ','
            << (values != nullptr ? cell_text(Cell((*values)[i]), CellFormat::NineDigits) : "");
      }
    }
    out << '\n';
  }
  close_output_file(out, path);
}

void write_requests_jsonl(const MetricsCollector& collector, const std::filesystem::path& path) {
  const auto& records = collector.request_records();
  auto out = open_output_file(path);
  for (std::size_t index : request_file_order(records))
    out << request_json_line(records[index]) << '\n';
  close_output_file(out, path);
}

void write_iterations_csv(const MetricsCollector& collector, const std::filesystem::path& path) {
  const auto& records = collector.iteration_records();
  auto out = open_output_file(path);
  write_header(out, iteration_columns());
  out << '\n';
  for (std::size_t index : iteration_file_order(records)) {
    write_row(out, iteration_columns(), records[index]);
    out << '\n';
  }
  close_output_file(out, path);
}

void CsvReporter::write(const RunResult& result, const std::filesystem::path& out_dir) const {
  const auto& options = result.collector.options();
  if (options.keep_request_records) {
    write_requests_csv(result.collector, out_dir / "requests.csv");
    if (requests_jsonl_) write_requests_jsonl(result.collector, out_dir / "requests.jsonl");
  }
  if (options.keep_iteration_records) {
    write_iterations_csv(result.collector, out_dir / "iterations.csv");
  }
}

}  // namespace servesim
