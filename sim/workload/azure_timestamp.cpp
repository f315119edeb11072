#include "sim/workload/azure_timestamp.h"

#include <chrono>

namespace servesim {
namespace {

// Exactly `digits` decimal digits at `text[at]`.
std::optional<int> digits_at(std::string_view text, std::size_t at, std::size_t digits) {
  if (at + digits > text.size()) return std::nullopt;
  int value = 0;
  for (std::size_t i = at; i < at + digits; ++i) {
    if (text[i] < '0' || text[i] > '9') return std::nullopt;
    value = value * 10 + (text[i] - '0');
  }
  return value;
}

}  // namespace

std::optional<std::int64_t> parse_azure_timestamp_ns(std::string_view text) {
  // Fixed layout: YYYY-MM-DD HH:MM:SS, separators at 4, 7, 10, 13, 16.
  constexpr std::size_t kWholeSecondsLength = 19;
  if (text.size() < kWholeSecondsLength || text[4] != '-' || text[7] != '-' ||
      (text[10] != ' ' && text[10] != 'T') || text[13] != ':' || text[16] != ':') {
    return std::nullopt;
  }
  const auto year = digits_at(text, 0, 4);
  const auto month = digits_at(text, 5, 2);
  const auto day = digits_at(text, 8, 2);
  const auto hour = digits_at(text, 11, 2);
  const auto minute = digits_at(text, 14, 2);
  const auto second = digits_at(text, 17, 2);
  if (!year || !month || !day || !hour || !minute || !second) return std::nullopt;
  if (*hour > 23 || *minute > 59 || *second > 59) return std::nullopt;
  // Nanoseconds since 1970 of years 1970-2200 fit in 63 bits, and so do their differences.
  if (*year < 1970 || *year > 2200) return std::nullopt;
  const std::chrono::year_month_day date{std::chrono::year(*year),
                                         std::chrono::month(static_cast<unsigned>(*month)),
                                         std::chrono::day(static_cast<unsigned>(*day))};
  if (!date.ok()) return std::nullopt;

  std::int64_t fraction_ns = 0;
  if (text.size() > kWholeSecondsLength) {
    const std::string_view fraction = text.substr(kWholeSecondsLength + 1);
    if (text[kWholeSecondsLength] != '.' || fraction.empty() || fraction.size() > 9) {
      return std::nullopt;
    }
    const auto value = digits_at(fraction, 0, fraction.size());
    if (!value) return std::nullopt;
    fraction_ns = *value;
    for (std::size_t i = fraction.size(); i < 9; ++i)
      fraction_ns *= 10;
  }
  const std::int64_t days = std::chrono::sys_days(date).time_since_epoch().count();
  const std::int64_t seconds = ((days * 24 + *hour) * 60 + *minute) * 60 + *second;
  return seconds * 1'000'000'000 + fraction_ns;
}

}  // namespace servesim
