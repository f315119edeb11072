#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "sim/metrics/metrics_collector.h"
#include "sim/metrics/records.h"

namespace servesim {

// The columns of requests.csv and iterations.csv, defined once: the CSV and JSON-lines
// writers print them, and the Python module builds its DataFrames from them, so the two carry
// the same columns with the same values. docs/metrics.md describes each column.

// How a column's values are written (docs/metrics.md, "Number formats").
enum class CellFormat {
  Integer,     // an integer
  RoundTrip,   // a double in the shortest form that reads back as exactly it (timestamps)
  NineDigits,  // a derived double with 9 significant digits (latencies, ratios)
  Text,        // a string, quoted in the CSV when RFC 4180 asks for it
};

// One cell: empty (an undefined value, such as the TTFT of a rejected request), an integer,
// a double or a text.
using Cell = std::variant<std::monostate, std::int64_t, double, std::string>;

template <class Record>
struct RecordColumn {
  const char* name;
  CellFormat format;
  Cell (*cell)(const Record& record);  // the value, before the format rounds it
};

std::span<const RecordColumn<RequestRecord>> request_columns();
std::span<const RecordColumn<IterationRecord>> iteration_columns();

// The order the files list records in, as indices into `records`: requests by id, iterations
// by start time, then replica (how replicas' reports interleave is not part of the result).
std::vector<std::size_t> request_file_order(const std::vector<RequestRecord>& records);
std::vector<std::size_t> iteration_file_order(const std::vector<IterationRecord>& records);

// The cell as the CSV writes it: empty text for an empty cell, a text unquoted.
std::string cell_text(const Cell& cell, CellFormat format);
// Appends cell_text(cell, format) to `out`, without a string of its own.
void append_cell_text(std::string& out, const Cell& cell, CellFormat format);
// Writes cell_text(cell, format) of a cell that is not a text at `first`, which must have
// kMaxNumberCellChars characters of room; returns the end of what it wrote.
inline constexpr std::size_t kMaxNumberCellChars = 32;
char* write_number_cell(char* first, const Cell& cell, CellFormat format);

// The fast path of an iterations.csv row: every cell of iteration_columns(), comma-separated,
// written at `first` straight from the record's fields (no Cell, no call per column), which
// must have iteration_columns().size() x (kMaxNumberCellChars + 1) characters of room; returns
// the end. A test holds it equal to the columns' cells joined.
char* write_iteration_cells(char* first, const IterationRecord& record);
// The same for a requests.csv row of a request that was served (not rejected: a rejected
// one's reason is a text, written by the columns' path), with the same room.
char* write_served_request_cells(char* first, const RequestRecord& record);

// The double that reading the written cell back gives: `value` itself, except that
// NineDigits rounds it to 9 significant digits.
double written_value(double value, CellFormat format);

// One column of a whole file, as a reader of the file gets it back (pandas.read_csv, say):
// integers when no cell is empty, else doubles with NaN for the empty cells; doubles as
// written_value gives them (NaN when empty); texts (nullopt when empty).
struct ColumnValues {
  std::string name;
  std::variant<std::vector<std::int64_t>, std::vector<double>,
               std::vector<std::optional<std::string>>>
      values;
};

// requests.csv and iterations.csv as columns, rows in the files' order.
std::vector<ColumnValues> request_table(const std::vector<RequestRecord>& records);

// A disaggregated run's requests.csv ends with each request's TTFT parts
// (MetricsCollector::ttft_parts): the columns' names (ttft_PART_s, in kTtftPartNames order),
// and the columns (NineDigits; NaN for a request without parts, a rejected one), rows in the
// file's order.
std::string ttft_part_column(std::size_t part);
std::vector<ColumnValues> ttft_part_table(const MetricsCollector& collector);
std::vector<ColumnValues> iteration_table(const std::vector<IterationRecord>& records);

}  // namespace servesim
