#include "sim/metrics/csv_format.h"

#include <array>
#include <charconv>

#include "sim/core/error.h"

namespace servesim {

// 32 characters hold any double in either format below.
std::string format_round_trip(double value) {
  std::array<char, 32> buffer{};
  const auto result = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
  return std::string(buffer.data(), result.ptr);
}

std::string format_9_digits(double value) {
  std::array<char, 32> buffer{};
  const auto result = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value,
                                    std::chars_format::general, 9);
  return std::string(buffer.data(), result.ptr);
}

std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  quoted += '"';
  return quoted;
}

std::vector<std::vector<std::string>> parse_csv(std::string_view text, const std::string& source) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string field;
  bool quoted = false;
  bool row_has_text = false;
  const auto end_row = [&] {
    if (row_has_text) {
      row.push_back(std::move(field));
      rows.push_back(std::move(row));
    }
    row.clear();
    field.clear();
    row_has_text = false;
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c != '"') {
        field += c;
      } else if (i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else {
        quoted = false;
      }
      continue;
    }
    if (c == '"') {
      quoted = true;
      row_has_text = true;
    } else if (c == ',') {
      row.push_back(std::move(field));
      field.clear();
      row_has_text = true;
    } else if (c == '\n') {
      end_row();
    } else if (c != '\r') {
      field += c;
      row_has_text = true;
    }
  }
  if (quoted) throw InputError(source, "a quoted field is not closed before the end of the file");
  end_row();
  return rows;
}

}  // namespace servesim
