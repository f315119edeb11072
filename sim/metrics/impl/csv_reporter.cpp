#include "sim/metrics/impl/csv_reporter.h"

#include <span>
#include <string>
#include <utility>
#include <variant>

#include <nlohmann/json.hpp>

#include "sim/metrics/csv_format.h"
#include "sim/metrics/output_file.h"
#include "sim/metrics/record_columns.h"
#include "sim/metrics/run_result.h"

namespace servesim {
namespace {

// Rows go to the file in blocks of about this many bytes.
constexpr std::size_t kFlushBytes = 1 << 16;

template <class Record>
void append_header(std::string& line, std::span<const RecordColumn<Record>> columns) {
  for (std::size_t i = 0; i < columns.size(); ++i) {
    if (i > 0) line += ',';
    line += columns[i].name;
  }
}

// One CSV row without its line end: each column's cell as text, texts quoted where RFC 4180
// asks. Numbers are written straight into room made at the end of `line`.
template <class Record>
void append_row(std::string& line, std::span<const RecordColumn<Record>> columns,
                const Record& record) {
  constexpr std::size_t kRoom = kMaxNumberCellChars + 1;  // a cell and its comma
  std::size_t used = line.size();
  line.resize(used + columns.size() * kRoom);
  for (std::size_t i = 0; i < columns.size(); ++i) {
    const RecordColumn<Record>& column = columns[i];
    if (i > 0) line[used++] = ',';
    const Cell cell = column.cell(record);
    if (column.format == CellFormat::Text) {
      line.resize(used);
      line += csv_field(cell_text(cell, column.format));
      used = line.size();
      line.resize(used + (columns.size() - i) * kRoom);
    } else {
      used = static_cast<std::size_t>(write_number_cell(line.data() + used, cell, column.format) -
                                      line.data());
    }
  }
  line.resize(used);
}

// The same cells as one JSON object: every number cell is already a JSON number as written,
// an empty cell is null, a text a JSON string.
void append_json_line(std::string& line, const RequestRecord& r) {
  line += '{';
  bool first = true;
  for (const auto& column : request_columns()) {
    line += first ? "\"" : ", \"";
    line += column.name;
    line += "\": ";
    first = false;
    const Cell cell = column.cell(r);
    if (std::holds_alternative<std::monostate>(cell)) {
      line += "null";
    } else if (column.format == CellFormat::Text) {
      line += nlohmann::json(cell_text(cell, column.format)).dump();
    } else {
      append_cell_text(line, cell, column.format);
    }
  }
  line += '}';
}

}  // namespace

void CsvRecordWriter::File::open(const std::filesystem::path& file) {
  path = file;
  out = open_output_file(path);
}

void CsvRecordWriter::File::flush_if_full() {
  if (buffer.size() < kFlushBytes) return;
  out.write(buffer.data(), static_cast<std::streamsize>(buffer.size()));
  buffer.clear();
}

void CsvRecordWriter::File::close() {
  if (!out.is_open()) return;
  out.write(buffer.data(), static_cast<std::streamsize>(buffer.size()));
  buffer.clear();
  close_output_file(out, path);
}

RecordFiles RecordFiles::in(const std::filesystem::path& dir, bool requests_jsonl) {
  RecordFiles files;
  files.requests = dir / "requests.csv";
  if (requests_jsonl) files.requests_jsonl = dir / "requests.jsonl";
  files.iterations = dir / "iterations.csv";
  return files;
}

void CsvRecordWriter::begin(const RecordLayout& layout) {
  layout_ = layout;
  // A header without rows would read as a run with no requests: files of records the run
  // does not report are not written.
  if (!layout.requests) files_.requests = files_.requests_jsonl = std::filesystem::path();
  if (!layout.iterations) files_.iterations.clear();
  if (!files_.requests.empty()) {
    requests_.open(files_.requests);
    append_header(requests_.buffer, request_columns());
    // A disaggregated run's requests also have their TTFT in parts, in columns after the
    // rest (empty for a rejected request).
    for (std::size_t i = 0; layout.ttft_parts && i < kTtftParts; ++i) {
      requests_.buffer += ',';
      requests_.buffer += ttft_part_column(i);
    }
    requests_.buffer += '\n';
  }
  if (!files_.requests_jsonl.empty()) requests_jsonl_.open(files_.requests_jsonl);
  if (!files_.iterations.empty()) {
    iterations_.open(files_.iterations);
    append_header(iterations_.buffer, iteration_columns());
    iterations_.buffer += '\n';
  }
}

void CsvRecordWriter::on_request(const RequestRecord& record,
                                 const std::array<double, kTtftParts>* ttft_parts) {
  if (!files_.requests.empty()) {
    std::string& line = requests_.buffer;
    if (record.rejected) {
      append_row(line, request_columns(), record);
    } else {
      const std::size_t used = line.size();
      line.resize(used + request_columns().size() * (kMaxNumberCellChars + 1));
      line.resize(static_cast<std::size_t>(write_served_request_cells(line.data() + used, record) -
                                           line.data()));
    }
    for (std::size_t i = 0; layout_.ttft_parts && i < kTtftParts; ++i) {
      line += ',';
      if (ttft_parts != nullptr)
        append_cell_text(line, Cell((*ttft_parts)[i]), CellFormat::NineDigits);
    }
    line += '\n';
    requests_.flush_if_full();
  }
  if (!files_.requests_jsonl.empty()) {
    append_json_line(requests_jsonl_.buffer, record);
    requests_jsonl_.buffer += '\n';
    requests_jsonl_.flush_if_full();
  }
}

void CsvRecordWriter::on_iteration(const IterationRecord& record) {
  if (files_.iterations.empty()) return;
  std::string& line = iterations_.buffer;
  const std::size_t used = line.size();
  line.resize(used + iteration_columns().size() * (kMaxNumberCellChars + 1));
  char* const end = write_iteration_cells(line.data() + used, record);
  *end = '\n';
  line.resize(static_cast<std::size_t>(end + 1 - line.data()));
  iterations_.flush_if_full();
}

void CsvRecordWriter::finish() {
  requests_.close();
  requests_jsonl_.close();
  iterations_.close();
}

namespace {

// The records `collector` kept, in the files' order, to the files `files` names.
void write_kept_records(const MetricsCollector& collector, const RecordFiles& files) {
  CsvRecordWriter writer(files);
  const MetricsOptions& kept = collector.options();
  writer.begin({.requests = kept.keep_request_records,
                .iterations = kept.keep_iteration_records,
                .ttft_parts = collector.has_ttft_parts()});
  if (!files.requests.empty() || !files.requests_jsonl.empty()) {
    const auto& records = collector.request_records();
    for (const std::size_t index : request_file_order(records))
      writer.on_request(records[index], collector.ttft_parts(records[index].id));
  }
  if (!files.iterations.empty()) {
    const auto& records = collector.iteration_records();
    for (const std::size_t index : iteration_file_order(records))
      writer.on_iteration(records[index]);
  }
  writer.finish();
}

}  // namespace

void write_requests_csv(const MetricsCollector& collector, const std::filesystem::path& path) {
  RecordFiles files;
  files.requests = path;
  write_kept_records(collector, files);
}

void write_iterations_csv(const MetricsCollector& collector, const std::filesystem::path& path) {
  RecordFiles files;
  files.iterations = path;
  write_kept_records(collector, files);
}

void CsvReporter::write(const RunResult& result, const std::filesystem::path& out_dir) const {
  write_kept_records(result.collector, RecordFiles::in(out_dir, requests_jsonl_));
}

}  // namespace servesim
