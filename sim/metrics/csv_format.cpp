#include "sim/metrics/csv_format.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>

#include "sim/core/error.h"

namespace servesim {

// 32 characters hold any double in either format below.
std::string format_round_trip(double value) {
  std::array<char, 32> buffer{};
  return std::string(buffer.data(), write_round_trip(buffer.data(), value));
}

char* write_round_trip(char* first, double value) {
  // A value of whole nanoseconds n (value == n / 1e9 as rounded) has the decimal n * 10^-9 in
  // its rounding interval, and no shorter decimal is there: any other of at most 9 fractional
  // digits is 10^-9 away or more, wider than the interval below 4.5e6 s (2^-52 relative). From
  // 1 ms to 10^5 s fixed notation is never longer than scientific (to_chars picks fixed on a
  // tie), so the text is n's digits with the point 9 from the right, trailing zeros dropped.
  if (value >= 1e-3 && value < 1e5) {
    const auto ns = static_cast<std::int64_t>(std::llround(value * 1e9));
    if (static_cast<double>(ns) / 1e9 == value) {
      const std::int64_t whole = ns / 1'000'000'000;
      std::int64_t fraction = ns % 1'000'000'000;
      char* end = std::to_chars(first, first + 32, whole).ptr;
      if (fraction == 0) return end;
      int digits = 9;
      while (fraction % 10 == 0) {
        fraction /= 10;
        --digits;
      }
      *end++ = '.';
      char* const fraction_end = end + digits;
      for (char* p = fraction_end; p != end;) {
        *--p = static_cast<char>('0' + fraction % 10);
        fraction /= 10;
      }
      return fraction_end;
    }
  }
  return std::to_chars(first, first + 32, value).ptr;
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
