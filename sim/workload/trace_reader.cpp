#include "sim/workload/trace_reader.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>

#include <nlohmann/json.hpp>

#include "sim/core/error.h"
#include "sim/workload/arrival_process.h"
#include "sim/workload/azure_timestamp.h"
#include "sim/workload/csv_cursor.h"

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

// A positive whole token count of a Mooncake line.
std::int64_t mooncake_tokens(const CsvCursor& csv, const nlohmann::json& row, const char* key) {
  const auto it = row.find(key);
  if (it == row.end()) csv.fail(std::string("missing \"") + key + "\"");
  if (!it->is_number_integer() || it->get<std::int64_t>() < 1) {
    csv.fail(std::string(key) + ": expected a positive token count, got " + it->dump());
  }
  return it->get<std::int64_t>();
}

// Mooncake's traces (kvcache-ai/Mooncake, FAST 2025): one JSON object a line with the
// arrival "timestamp" in milliseconds, "input_length" and "output_length" in tokens, and
// "hash_ids", the prompt's 512-token blocks chained over the prefix (read for its form only:
// servesim has no prefix cache yet). Arrivals are the timestamps as written, to the ns.
Trace parse_mooncake(CsvCursor& csv, const std::string& source_name, std::size_t reserve) {
  Trace trace;
  trace.source_name = source_name;
  trace.arrivals.reserve(reserve);
  trace.lengths.reserve(reserve);
  do {
    const nlohmann::json row = nlohmann::json::parse(csv.line(), nullptr, false);
    if (!row.is_object()) csv.fail("expected one JSON object a line (Mooncake trace)");
    for (const auto& [key, value] : row.items()) {
      if (key != "timestamp" && key != "input_length" && key != "output_length" &&
          key != "hash_ids") {
        csv.fail("unknown key \"" + key +
                 "\" (a Mooncake line has timestamp, input_length, output_length, hash_ids)");
      }
    }
    const auto timestamp = row.find("timestamp");
    if (timestamp == row.end()) csv.fail("missing \"timestamp\"");
    const double ms = timestamp->is_number() ? timestamp->get<double>() : -1;
    if (!(ms >= 0 && ms <= kMaxArrivalTimeS * 1e3)) {
      csv.fail("timestamp: expected milliseconds in [0, 1e12], got " + timestamp->dump());
    }
    const std::int64_t ns = timestamp->is_number_integer()
                                ? timestamp->get<std::int64_t>() * 1'000'000
                                : std::llround(ms * 1e6);
    if (const auto ids = row.find("hash_ids"); ids != row.end() && !ids->is_array()) {
      csv.fail("hash_ids: expected an array of block ids");
    }
    if (!trace.arrivals.empty() && ns < trace.arrivals.back().ns()) {
      csv.fail("timestamp goes backwards: " + std::to_string(ms) + " ms, the line before was at " +
               std::to_string(trace.arrivals.back().seconds() * 1e3) + " ms");
    }
    trace.arrivals.push_back(SimTime::from_ns(ns));
    trace.lengths.push_back(
        {mooncake_tokens(csv, row, "input_length"), mooncake_tokens(csv, row, "output_length")});
  } while (csv.next_line());
  return trace;
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
  if (format == TraceFormat::Mooncake) return parse_mooncake(csv, source_name, text.size() / 100);
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
    const nlohmann::json first = nlohmann::json::parse(csv.line(), nullptr, false);
    if (first.is_object() && first.contains("input_length")) return WorkloadFileKind::Trace;
    return WorkloadFileKind::Spec;  // its reader names any error
  }
  csv.fail(
      "not a workload: expected a JSON workload spec, an Azure LLM inference trace "
      "(\"TIMESTAMP,ContextTokens,GeneratedTokens\"), a plain trace "
      "(\"arrival_time_s,prompt_tokens,output_tokens\") or a Mooncake trace (JSON lines with "
      "timestamp, input_length, output_length)");
}

}  // namespace servesim
