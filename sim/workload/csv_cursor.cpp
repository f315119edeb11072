#include "sim/workload/csv_cursor.h"

#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>

#include "sim/core/error.h"

namespace servesim {
namespace {

std::string_view trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t");
  return text.substr(first, last - first + 1);
}

std::string quoted(std::string_view field) {
  constexpr std::size_t kShown = 40;
  std::string text(1, '"');
  text.append(field.substr(0, kShown));
  text.append(field.size() > kShown ? "...\"" : "\"");
  return text;
}

}  // namespace

std::string read_text_file(const std::filesystem::path& path) {
  const std::string name = path.string();
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw InputError(name, "file not found");
  if (!std::filesystem::is_regular_file(path, ec)) throw InputError(name, "not a regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(name, "cannot open file for reading");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) throw InputError(name, "read error");
  return std::move(buffer).str();
}

CsvCursor::CsvCursor(std::string_view text, std::string source_name)
    : text_(text), source_name_(std::move(source_name)) {
  constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";
  if (text_.starts_with(kByteOrderMark)) position_ = kByteOrderMark.size();
}

bool CsvCursor::next_line() {
  while (position_ < text_.size()) {
    const auto end = std::min(text_.find('\n', position_), text_.size());
    std::string_view line = text_.substr(position_, end - position_);
    position_ = end + 1;
    ++line_number_;
    if (line.ends_with('\r')) line.remove_suffix(1);
    if (trim(line).empty()) continue;
    line_ = trim(line);
    fields_.clear();
    std::size_t start = 0;
    for (;;) {
      const auto comma = line.find(',', start);
      fields_.push_back(trim(line.substr(start, comma - start)));
      if (comma == std::string_view::npos) break;
      start = comma + 1;
    }
    return true;
  }
  return false;
}

void CsvCursor::expect_fields(std::size_t count) const {
  if (fields_.size() != count) {
    fail("expected " + std::to_string(count) + " comma-separated fields, got " +
         std::to_string(fields_.size()));
  }
}

std::int64_t CsvCursor::positive_integer(std::size_t index, std::string_view column) const {
  const std::string_view field = fields_.at(index);
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), value);
  if (ec != std::errc() || end != field.data() + field.size()) {
    fail(std::string(column) + ": expected an integer, got " + quoted(field));
  }
  if (value <= 0) {
    fail(std::string(column) + ": expected a positive token count, got " + std::to_string(value));
  }
  return value;
}

double CsvCursor::finite_number(std::size_t index, std::string_view column) const {
  const std::string_view field = fields_.at(index);
  double value = 0;
  const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), value);
  if (ec != std::errc() || end != field.data() + field.size() || !std::isfinite(value)) {
    fail(std::string(column) + ": expected a number, got " + quoted(field));
  }
  return value;
}

void CsvCursor::fail(const std::string& message) const {
  throw InputError(source_name_ + ":" + std::to_string(line_number_), message);
}

}  // namespace servesim
