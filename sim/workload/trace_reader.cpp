#include "sim/workload/trace_reader.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>

#include <nlohmann/json.hpp>

#include "sim/core/error.h"
#include "sim/core/json_reader.h"
#include "sim/workload/arrival_process.h"
#include "sim/workload/azure_timestamp.h"
#include "sim/workload/csv_cursor.h"
#include "sim/workload/mooncake_trace.h"

namespace servesim {
namespace {

enum class TraceFormat { Azure, Plain, Mooncake };

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
  if (csv.line().starts_with('{')) return TraceFormat::Mooncake;
  csv.fail(
      "unrecognised trace header; expected \"TIMESTAMP,ContextTokens,GeneratedTokens\" (Azure "
      "LLM inference trace), \"arrival_time_s,prompt_tokens,output_tokens\" (plain) or JSON "
      "lines with timestamp, input_length and output_length (Mooncake)");
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
  // About 40 bytes a CSV row, 100 a Mooncake line: reserving avoids regrowing the vectors.
  if (format == TraceFormat::Mooncake)
    return parse_mooncake_lines(csv, source_name, text.size() / 100);
  const auto& header = format == TraceFormat::Azure ? kAzureHeader : kPlainHeader;

  Trace trace;
  trace.source_name = source_name;
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

TokenContent Trace::content(std::size_t row) const {
  if (!has_content()) return {};
  return mooncake_content(row_hash_ids(row), lengths[row].prompt_tokens);
}

Trace trace_rows(Trace trace, std::int64_t first_row, std::optional<std::int64_t> end_row,
                 const std::string& where) {
  const auto rows = static_cast<std::int64_t>(trace.size());
  const std::string count = " (" + trace.source_name + " has " + std::to_string(rows) + " rows)";
  if (first_row < 0 || first_row >= rows) {
    throw InputError(where, "field \"trace.first_row\": expected a row in [0, " +
                                std::to_string(rows) + "), got " + std::to_string(first_row) +
                                count);
  }
  const std::int64_t end = end_row.value_or(rows);
  if (end <= first_row || end > rows) {
    throw InputError(where, "field \"trace.end_row\": expected a row in [" +
                                std::to_string(first_row + 1) + ", " + std::to_string(rows) +
                                "], got " + std::to_string(end) + count);
  }
  if (first_row == 0 && end == rows) return trace;
  const auto first = static_cast<std::size_t>(first_row);
  const auto last = static_cast<std::size_t>(end);
  Trace kept;
  kept.source_name = trace.source_name;
  const SimTime origin = first > 0 ? trace.arrivals[first] : SimTime();
  kept.arrivals.reserve(last - first);
  for (std::size_t row = first; row < last; ++row)
    kept.arrivals.push_back(SimTime::from_ns(trace.arrivals[row].ns() - origin.ns()));
  kept.lengths.assign(trace.lengths.begin() + first_row, trace.lengths.begin() + end);
  if (trace.has_content()) {
    kept.hash_ids.assign(
        trace.hash_ids.begin() + static_cast<std::ptrdiff_t>(trace.hash_begin[first]),
        trace.hash_ids.begin() + static_cast<std::ptrdiff_t>(trace.hash_begin[last]));
    for (std::size_t row = first; row <= last; ++row)
      kept.hash_begin.push_back(trace.hash_begin[row] - trace.hash_begin[first]);
  }
  return kept;
}

Trace read_trace_file(const std::filesystem::path& path) {
  return parse_trace_text(read_text_file(path), path.string());
}

WorkloadFileKind workload_file_kind(const std::filesystem::path& path) {
  const std::string text = read_text_file(path);
  CsvCursor csv(text, path.string());
  if (!csv.next_line()) throw InputError(path.string(), "empty file (expected a workload)");
  if (header_is(csv.fields(), kAzureHeader) || header_is(csv.fields(), kPlainHeader)) {
    return WorkloadFileKind::Trace;
  }
  if (csv.line().starts_with('{')) {
    const auto first = parse_json_if_json(csv.line(), path.string());
    if (first && first->is_object() && first->contains("input_length")) {
      return WorkloadFileKind::Trace;
    }
    return WorkloadFileKind::Spec;  // its reader names any error
  }
  csv.fail(
      "not a workload: expected a JSON workload spec, an Azure LLM inference trace "
      "(\"TIMESTAMP,ContextTokens,GeneratedTokens\"), a plain trace "
      "(\"arrival_time_s,prompt_tokens,output_tokens\") or a Mooncake trace (JSON lines with "
      "timestamp, input_length, output_length)");
}

}  // namespace servesim
