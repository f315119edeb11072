#pragma once

// The values of a measured file's rows and of its setup, each with the place to name when it
// is wrong (docs/validation.md): what the readers of measured serving points share
// (serving_point.cpp for CSV files, serving_bench_result.cpp for vLLM's bench serve results).

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/calibration/serving_point.h"
#include "sim/core/error.h"
#include "sim/workload/csv_cursor.h"

namespace servesim::serving_fields {

// "text" in double quotes, for messages.
std::string in_quotes(std::string_view text);

// One value of a row, as text, with the place to name when it is wrong.
struct Cell {
  std::string text;
  std::string where;  // "FILE: row 3 (line 4), column \"tp\"" or "SETUP: field \"knobs.tp\""
};

// The InputError for a value that is not what `expected` says, naming where it came from.
[[noreturn]] void fail(const Cell& cell, const std::string& expected);
std::int64_t integer_of(const Cell& cell, std::int64_t minimum);
// A number of at least `minimum` (above it when `strictly_above`).
double number_of(const Cell& cell, double minimum, bool strictly_above);
double fraction_of(const Cell& cell);  // in (0, 1]
bool boolean_of(const Cell& cell);     // true, false, 1 or 0

// A setup file: the columns its measured files leave out, renamed columns and engine terms.
struct Setup {
  std::string name;                            // the file, for messages
  std::map<std::string, Cell> values;          // column -> value
  std::map<std::string, std::string> renames;  // format column -> the file's column
  // Format column -> the file's text -> what it stands for (nullopt: an empty cell), for files
  // whose cells say in words what the format says in values ("h100" for "h100-sxm").
  std::map<std::string, std::map<std::string, std::optional<std::string>>> translations;
  std::vector<std::pair<std::string, nlohmann::json>> engine_terms;

  // A file's cell of `column` as the setup's translations read it (unchanged when none does).
  std::optional<std::string> translate(std::string_view column, const std::string& text) const {
    const auto c = translations.find(std::string(column));
    if (c == translations.end()) return text;
    auto t = c->second.find(text);
    if (t == c->second.end()) t = c->second.find("*");  // any other text
    return t == c->second.end() ? std::optional<std::string>(text) : t->second;
  }
};

// Reads and checks a setup file (unknown keys and knobs refused, naming the field).
Setup read_setup(const std::filesystem::path& path);

// What the run configuration's `model` takes for a model a file names: a shipped model's name
// (from its name or Hugging Face id), or the path of a model file; else an InputError at
// `where` listing the shipped models.
std::string resolve_model(const std::string& name, const std::filesystem::path& data_root,
                          const std::string& where);
// A hardware profile's shipped name, or the path of a profile file.
std::string resolve_hardware(const std::string& name, const std::filesystem::path& data_root,
                             const std::string& where);

// The values of one data row: the file's cells over the setup's, and the command line's
// overrides (--hw, --engine) over both.
class Row {
 public:
  Row(const std::map<std::string, std::size_t>& columns, const CsvCursor* csv, std::size_t row,
      const Setup* setup, std::string source)
      : columns_(columns), csv_(csv), row_(row), setup_(setup), source_(std::move(source)) {}

  std::optional<Cell> find(std::string_view column) const {
    const auto it = columns_.find(std::string(column));
    if (it != columns_.end() && csv_ != nullptr) {
      std::optional<std::string> text(csv_->fields()[it->second]);
      if (setup_ != nullptr) text = setup_->translate(column, *text);
      if (text && !text->empty()) {
        return Cell{*text, source_ + ": row " + std::to_string(row_) + " (line " +
                               std::to_string(csv_->line_number()) + "), column " +
                               in_quotes(column)};
      }
    }
    if (setup_ != nullptr) {
      const auto s = setup_->values.find(std::string(column));
      if (s != setup_->values.end()) return s->second;
    }
    return std::nullopt;
  }
  Cell get(std::string_view column) const {
    if (auto cell = find(column)) return *cell;
    throw InputError(source_ + ": row " + std::to_string(row_) + " (line " +
                         std::to_string(csv_ != nullptr ? csv_->line_number() : 0) + "), column " +
                         in_quotes(column),
                     "empty, and the setup does not give it");
  }
  std::int64_t integer(std::string_view column, std::int64_t minimum) const {
    return integer_of(get(column), minimum);
  }
  double number(std::string_view column, double minimum, bool strictly_above) const {
    return number_of(get(column), minimum, strictly_above);
  }

 private:
  const std::map<std::string, std::size_t>& columns_;
  const CsvCursor* csv_;
  std::size_t row_;
  const Setup* setup_;
  std::string source_;
};

// The engine knobs a row (or a setup) gives.
EngineKnobs read_knobs(const Row& row);

}  // namespace servesim::serving_fields
