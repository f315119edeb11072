#include "sim/metrics/csv_format.h"

#include <algorithm>
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
      // n's digits (at least 10, zero-padded, so that a whole part precedes the point),
      // written two at a time by to_chars, then split 9 from the right.
      std::array<char, 24> digits{};
      char* const digits_end = std::to_chars(digits.data() + 10, digits.data() + 24, ns).ptr;
      const auto length = std::max<std::ptrdiff_t>(digits_end - (digits.data() + 10), 10);
      const char* begin = digits_end - length;
      std::fill(digits.data(), digits.data() + 10, '0');
      const char* const point = digits_end - 9;
      const char* end = digits_end;
      while (end != point && end[-1] == '0')
        --end;
      char* out = std::copy(begin, point, first);
      if (end == point) return out;
      *out++ = '.';
      return std::copy(point, end, out);
    }
  }
  return std::to_chars(first, first + 32, value).ptr;
}

std::string format_9_digits(double value) {
  std::array<char, 32> buffer{};
  return std::string(buffer.data(), write_9_digits(buffer.data(), value));
}

char* write_9_digits(char* first, double value) {
  // %.9g prints fixed notation for decimal exponents e from -4 to 8: the value rounded to 9
  // significant digits n (10^8 <= n < 10^9) with the point placed by e and trailing zeros
  // dropped. v x 10^(8 - e) is one rounding away from exact (10^0 to 10^12 are exact doubles),
  // within 2^-24 of the true product below 2^30: rounding it gives n unless the product is
  // that close to a tie, which is left to to_chars, as are the powers of ten (where rounding
  // may carry into a tenth digit) and every other value.
  static constexpr std::array<double, 17> kPowers = {
      1e-4, 1e-3, 1e-2, 1e-1, 1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12};
  const auto power = [](int e) { return kPowers[static_cast<std::size_t>(e + 4)]; };
  if (!(value >= power(-4) && value < power(9))) {
    return std::to_chars(first, first + 32, value, std::chars_format::general, 9).ptr;
  }
  int exponent = -4;
  while (value >= power(exponent + 1))
    ++exponent;
  const double scaled = value * power(8 - exponent);
  const auto digits = static_cast<std::int64_t>(std::floor(scaled + 0.5));
  if (std::abs(scaled - std::floor(scaled) - 0.5) <= 1e-6 || digits < 100'000'000 ||
      digits >= 1'000'000'000) {
    return std::to_chars(first, first + 32, value, std::chars_format::general, 9).ptr;
  }
  std::array<char, 9> text{};
  std::to_chars(text.data(), text.data() + text.size(), digits);
  int last = 8;  // the last significant digit
  while (text[static_cast<std::size_t>(last)] == '0')
    --last;
  // Digit i of n stands for 10^(exponent - i): the point goes before digit exponent + 1.
  char* out = first;
  if (exponent < 0) {
    *out++ = '0';
    *out++ = '.';
    out = std::fill_n(out, -exponent - 1, '0');
  }
  for (int i = 0; i <= last || i <= exponent; ++i) {
    if (exponent >= 0 && i == exponent + 1) *out++ = '.';
    *out++ = text[static_cast<std::size_t>(i)];
  }
  return out;
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
