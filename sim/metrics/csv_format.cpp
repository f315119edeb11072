#include "sim/metrics/csv_format.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <iomanip>
#include <sstream>

#include "sim/core/error.h"

namespace servesim {

// 32 characters hold any double in either format below.
std::string format_round_trip(double value) {
  std::array<char, 32> buffer{};
  return std::string(buffer.data(), write_round_trip(buffer.data(), value));
}

namespace {

// "00" to "99": the digits of a number two at a time.
constexpr std::array<char, 200> kDigitPairs = [] {
  std::array<char, 200> pairs{};
  for (std::size_t i = 0; i < 100; ++i) {
    pairs[2 * i] = static_cast<char>('0' + i / 10);
    pairs[2 * i + 1] = static_cast<char>('0' + i % 10);
  }
  return pairs;
}();

// The last `count` decimal digits of `value` (zero-padded), written at `first` (in 32-bit
// arithmetic where the value fits: the nanoseconds of a second, 9 significant digits).
template <class Unsigned>
char* write_padded_digits(char* first, Unsigned value, int count) {
  int i = count;
  for (; i >= 2; i -= 2) {
    const std::size_t pair = 2 * static_cast<std::size_t>(value % 100);
    value /= 100;
    first[i - 2] = kDigitPairs[pair];
    first[i - 1] = kDigitPairs[pair + 1];
  }
  if (i == 1) first[0] = static_cast<char>('0' + value % 10);
  return first + count;
}

// How many decimal digits `value` (< 10^16) has; 1 for 0.
int decimal_digits(std::uint64_t value) {
  int digits = 1;
  for (std::uint64_t bound = 10; digits < 16 && value >= bound; bound *= 10)
    ++digits;
  return digits;
}

}  // namespace

char* write_round_trip(char* first, double value) {
  // Zero (not -0, which prints its sign): "0", as the prefill pairs of every decode step.
  if (value == 0 && !std::signbit(value)) {
    *first = '0';
    return first + 1;
  }
  // A value of whole nanoseconds n (value == n / 1e9 as rounded) has the decimal n * 10^-9 in
  // its rounding interval, and no shorter decimal is there: any other of at most 9 fractional
  // digits is 10^-9 away or more, wider than the interval below 4.5e6 s (2^-52 relative). From
  // 1 ms to 10^5 s fixed notation is never longer than scientific (to_chars picks fixed on a
  // tie), so the text is n's whole seconds, then its 9 digits of nanoseconds with their
  // trailing zeros dropped (and the point with them when all are).
  if (value >= 1e-3 && value < 1e5) {
    // Rounded to the nearest (positive: truncation of + 0.5, near enough: the check below
    // takes only an n that gives the value back).
    const auto ns = static_cast<std::int64_t>(value * 1e9 + 0.5);
    if (static_cast<double>(ns) / 1e9 == value) {
      constexpr std::int64_t kNsPerS = 1'000'000'000;
      char* out = std::to_chars(first, first + 32, ns / kNsPerS).ptr;
      auto fraction = static_cast<std::uint32_t>(ns % kNsPerS);
      if (fraction == 0) return out;
      int digits = 9;
      for (; fraction % 10 == 0; fraction /= 10)
        --digits;
      *out++ = '.';
      return write_padded_digits(out, fraction, digits);
    }
  }
  // An integer below 10^15 (the prefill pairs): every integer there is a double whose
  // neighbours are at most 1/8 away, so its shortest decimal is its own digits less their
  // trailing zeros, in fixed notation unless scientific (d[.ddd]e+XX) is shorter.
  if (value >= 1e5 && value < 1e15 && value == std::floor(value)) {
    auto integer = static_cast<std::uint64_t>(value);
    const int digits = decimal_digits(integer);
    int significant = digits;
    for (; integer % 10 == 0; integer /= 10)
      --significant;
    const int scientific = significant + (significant > 1 ? 1 : 0) + 4;
    if (digits <= scientific) {
      char* const out = write_padded_digits(first, integer, significant);
      return std::fill_n(out, digits - significant, '0');
    }
  }
  return std::to_chars(first, first + 32, value).ptr;
}

std::string format_fixed(double value, int decimals) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(decimals) << value;
  return out.str();
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
  // Positive and below 2^63: truncation is floor.
  const double whole = static_cast<double>(static_cast<std::int64_t>(scaled));
  const auto digits = static_cast<std::int64_t>(scaled + 0.5);
  if (std::abs(scaled - whole - 0.5) <= 1e-6 || digits < 100'000'000 || digits >= 1'000'000'000) {
    return std::to_chars(first, first + 32, value, std::chars_format::general, 9).ptr;
  }
  // n's significant digits, trailing zeros dropped; digit i of n stands for
  // 10^(exponent - i): the point goes before digit exponent + 1.
  auto significant = static_cast<std::uint32_t>(digits);
  int count = 9;
  for (; significant % 10 == 0; significant /= 10)
    --count;
  char* out = first;
  if (exponent < 0) {
    *out++ = '0';
    *out++ = '.';
    out = std::fill_n(out, -exponent - 1, '0');
    return write_padded_digits(out, significant, count);
  }
  const int before_point = exponent + 1;
  if (count <= before_point) {
    out = write_padded_digits(out, significant, count);
    return std::fill_n(out, before_point - count, '0');
  }
  const auto after_point = static_cast<std::uint32_t>(power(count - before_point));
  out = write_padded_digits(out, significant / after_point, before_point);
  *out++ = '.';
  return write_padded_digits(out, significant % after_point, count - before_point);
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
