#include "sim/workload/trace_reader.h"

#include <algorithm>
#include <array>
#include <optional>

#include "sim/core/error.h"
#include "sim/workload/arrival_process.h"
#include "sim/workload/azure_timestamp.h"
#include "sim/workload/csv_cursor.h"

namespace servesim {
namespace {

enum class TraceFormat { Azure, Plain };

constexpr std::array<std::string_view, 3> kAzureHeader{"TIMESTAMP", "ContextTokens",
                                                       "GeneratedTokens"};
constexpr std::array<std::string_view, 3> kPlainHeader{"arrival_time_s", "prompt_tokens",
                                                       "output_tokens"};

bool header_is(const std::vector<std::string_view>& fields,
               const std::array<std::string_view, 3>& expected) {
  return fields.size() == expected.size() &&
         std::equal(fields.begin(), fields.end(), expected.begin());
}

TraceFormat detect_format(const CsvCursor& csv) {
  if (header_is(csv.fields(), kAzureHeader)) return TraceFormat::Azure;
  if (header_is(csv.fields(), kPlainHeader)) return TraceFormat::Plain;
  csv.fail(
      "unrecognised trace header; expected \"TIMESTAMP,ContextTokens,GeneratedTokens\" (Azure "
      "LLM inference trace) or \"arrival_time_s,prompt_tokens,output_tokens\"");
}

// Arrival of the current row in ns: since the first row (Azure) or as written (plain).
std::int64_t arrival_ns(const CsvCursor& csv, TraceFormat format,
                        std::optional<std::int64_t>& first_timestamp_ns) {
  if (format == TraceFormat::Plain) {
    const double seconds = csv.finite_number(0, "arrival_time_s");
    if (!(seconds >= 0 && seconds <= kMaxArrivalTimeS)) {
      csv.fail("arrival_time_s: expected a time in [0, 1e9] s");
    }
    return SimTime::from_seconds(seconds).ns();
  }
  const auto timestamp_ns = parse_azure_timestamp_ns(csv.fields()[0]);
  if (!timestamp_ns) {
    csv.fail("TIMESTAMP: expected \"YYYY-MM-DD HH:MM:SS.fffffff\", got \"" +
             std::string(csv.fields()[0]) + "\"");
  }
  if (!first_timestamp_ns) first_timestamp_ns = *timestamp_ns;
  const std::int64_t since_first_ns = *timestamp_ns - *first_timestamp_ns;
  if (since_first_ns > static_cast<std::int64_t>(kMaxArrivalTimeS * 1e9)) {
    csv.fail("TIMESTAMP: more than 1e9 s (31.7 years) after the first row");
  }
  return since_first_ns;
}

}  // namespace

Trace parse_trace_text(std::string_view text, const std::string& source_name) {
  CsvCursor csv(text, source_name);
  if (!csv.next_line()) throw InputError(source_name, "empty trace (no header, no rows)");
  const TraceFormat format = detect_format(csv);
  const auto& header = format == TraceFormat::Azure ? kAzureHeader : kPlainHeader;

  Trace trace;
  trace.source_name = source_name;
  // About 40 bytes a row: reserving avoids regrowing the vectors of a large trace.
  trace.arrivals.reserve(text.size() / 40);
  trace.lengths.reserve(text.size() / 40);
  std::optional<std::int64_t> first_timestamp_ns;
  while (csv.next_line()) {
    csv.expect_fields(header.size());
    const auto ns = arrival_ns(csv, format, first_timestamp_ns);
    if (!trace.arrivals.empty() && ns < trace.arrivals.back().ns()) {
      csv.fail(std::string(header[0]) + " goes backwards: " +
               std::to_string(SimTime::from_ns(ns).seconds()) + " s after the start, the row " +
               "before was at " + std::to_string(trace.arrivals.back().seconds()) + " s");
    }
    trace.arrivals.push_back(SimTime::from_ns(ns));
    trace.lengths.push_back(
        {csv.positive_integer(1, header[1]), csv.positive_integer(2, header[2])});
  }
  if (trace.arrivals.empty()) throw InputError(source_name, "trace has a header but no rows");
  return trace;
}

Trace read_trace_file(const std::filesystem::path& path) {
  return parse_trace_text(read_text_file(path), path.string());
}

}  // namespace servesim
