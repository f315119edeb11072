#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace servesim {

// Parses an Azure LLM inference trace timestamp, "YYYY-MM-DD HH:MM:SS" with an optional
// fraction of up to 9 digits ("2023-11-16 18:15:46.6805900"), to integer nanoseconds since
// 1970-01-01 (the trace's time zone, unstated, does not matter: only differences are used).
// Parsed by hand because std::get_time drops the fraction and a double of seconds since 1970
// keeps only microseconds. nullopt when malformed, not a real calendar date and time, or
// outside the years 1970-2200.
std::optional<std::int64_t> parse_azure_timestamp_ns(std::string_view text);

}  // namespace servesim
