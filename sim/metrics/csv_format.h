#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace servesim {

// Cell formatting for the CSV files. Independent of the C locale, so output is the same
// whatever locale the host process runs in.

// The shortest text that reads back as exactly `value`: for timestamps, which users join
// and subtract.
std::string format_round_trip(double value);
// The same text written at `first`, which must have 32 characters of room; returns its end.
// Equal to std::to_chars(first, first + 32, value), with fast paths for zero, for the
// simulator's times, whole nanoseconds (SimTime::seconds: ns / 1e9) from 1 ms to 10^5 s, whose
// shortest text is the decimal of the nanoseconds in fixed notation, and for integers from
// 10^5 to 10^15 (the prefill pair sums), whose shortest text is their digits.
char* write_round_trip(char* first, double value);

// Nine significant digits, like printf's %.9g: for derived values (latencies, ratios),
// nanosecond resolution below one second without noise digits from subtraction.
std::string format_9_digits(double value);
// The same text written at `first`, which must have 32 characters of room; returns its end.
// Equal to std::to_chars(first, first + 32, value, std::chars_format::general, 9), with a
// fast path for values from 10^-4 to 10^9 (fixed notation), where the digits come from one
// multiplication unless the value lies within 10^-6 of a rounding tie.
char* write_9_digits(char* first, double value);

// `value` in fixed notation with `decimals` digits after the point (std::fixed), for tables
// and messages.
std::string format_fixed(double value, int decimals);

// `text` as a CSV field (RFC 4180): quoted, with quotes doubled, when it contains a comma,
// a quote or a line break; unchanged otherwise.
std::string csv_field(std::string_view text);

// The rows of a CSV text that servesim wrote (the inverse of csv_field): fields split at
// commas outside quotes, quoted fields unquoted, LF or CRLF line ends, blank lines skipped.
// An unterminated quote throws InputError naming `source`.
std::vector<std::vector<std::string>> parse_csv(std::string_view text, const std::string& source);

}  // namespace servesim
