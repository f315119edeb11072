#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace servesim {

// Reads a whole text file; a missing or unreadable file is an InputError naming it.
std::string read_text_file(const std::filesystem::path& path);

// Walks the lines of a numeric CSV file, or of a JSON-lines file (LF or CRLF, a UTF-8 byte-order
// mark tolerated, blank lines skipped), splitting each at commas. No quoting: the trace and length
// files servesim reads never quote. Every error names the file and the 1-based line.
class CsvCursor {
 public:
  // `text` must outlive the cursor.
  CsvCursor(std::string_view text, std::string source_name);

  // Advances to the next non-blank line and splits it; false at the end of the text.
  bool next_line();
  std::size_t line_number() const { return line_number_; }
  // The fields of the current line, trimmed of spaces and tabs.
  const std::vector<std::string_view>& fields() const { return fields_; }
  // The current line itself, trimmed, for files of one JSON object a line.
  std::string_view line() const { return line_; }
  // Refuses a line whose field count differs from `count`.
  void expect_fields(std::size_t count) const;

  // Field `index` of the current line as a number; `column` names it in errors.
  std::int64_t positive_integer(std::size_t index, std::string_view column) const;
  double finite_number(std::size_t index, std::string_view column) const;

  [[noreturn]] void fail(const std::string& message) const;
  const std::string& source_name() const { return source_name_; }

 private:
  std::string_view text_;
  std::size_t position_ = 0;
  std::size_t line_number_ = 0;
  std::string source_name_;
  std::string_view line_;
  std::vector<std::string_view> fields_;
};

}  // namespace servesim
