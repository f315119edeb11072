#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/metrics/csv_format.h"

namespace servesim::cli {

// Human-readable figures with units. Memory sizes are binary (KiB, MiB, GiB: what allocators
// and nvidia-smi count in); rates and FLOPs are SI decimal.
std::string format_bytes(double bytes);
std::string format_count(double value);                        // 6,738,415,616
std::string format_si(double value, const std::string& unit);  // 1.23 TFLOP/s
std::string format_seconds(double seconds);                    // 12.3 us, 4.56 ms, 1.20 s
// format_fixed: sim/metrics/csv_format.h.

// Columns sized to their widest cell; the first column and any marked text columns are
// left-aligned, the rest (numbers) right-aligned.
class Table {
 public:
  explicit Table(std::vector<std::string> header, std::vector<std::size_t> text_columns = {});
  // At most `columns` characters a line: the widest text columns (not the first) wrap their
  // cells at spaces, onto lines of their own under the column, until the table fits (a word
  // longer than the column still overflows). 0: no limit (the default).
  void set_max_width(std::size_t columns) { max_width_ = columns; }
  void add_row(std::vector<std::string> cells);
  void add_separator();
  void print(std::ostream& out) const;

 private:
  std::vector<std::vector<std::string>> rows_;  // an empty row is a separator
  std::vector<std::size_t> text_columns_;
  std::size_t max_width_ = 0;
};

}  // namespace servesim::cli
