#include "sim/workload/mooncake_trace.h"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "sim/core/json_reader.h"
#include "sim/workload/arrival_process.h"
#include "sim/workload/content_namespaces.h"

namespace servesim {
namespace {

// A whole token count >= 1 of a Mooncake line.
std::int64_t token_count(const CsvCursor& csv, const nlohmann::json& row, const char* key) {
  const auto it = row.find(key);
  if (it == row.end()) csv.fail(std::string("missing \"") + key + "\"");
  if (!it->is_number_integer() || it->get<std::int64_t>() < 1) {
    csv.fail(std::string(key) + ": expected a positive whole token count, got " +
             json_excerpt(*it));
  }
  return it->get<std::int64_t>();
}

// The arrival of a line in ns: whole milliseconds exactly, fractional ones rounded to the ns.
std::int64_t arrival_ns(const CsvCursor& csv, const nlohmann::json& row) {
  const auto timestamp = row.find("timestamp");
  if (timestamp == row.end()) csv.fail("missing \"timestamp\"");
  const double ms = timestamp->is_number() ? timestamp->get<double>() : -1;
  if (!(ms >= 0 && ms <= kMaxArrivalTimeS * 1e3)) {
    csv.fail("timestamp: expected milliseconds in [0, 1e12], got " + json_excerpt(*timestamp));
  }
  return timestamp->is_number_integer() ? timestamp->get<std::int64_t>() * 1'000'000
                                        : std::llround(ms * 1e6);
}

// Appends the line's hash ids to the trace, checked against the prompt's length.
void read_hash_ids(const CsvCursor& csv, const nlohmann::json& row, std::int64_t input_length,
                   Trace& trace) {
  const auto ids = row.find("hash_ids");
  if (ids != row.end()) {
    if (!ids->is_array())
      csv.fail("hash_ids: expected an array of block ids, got " + json_excerpt(*ids));
    const std::int64_t blocks = (input_length + kMooncakeBlockTokens - 1) / kMooncakeBlockTokens;
    if (static_cast<std::int64_t>(ids->size()) > blocks) {
      csv.fail("hash_ids: " + std::to_string(ids->size()) + " block ids, but input_length " +
               std::to_string(input_length) + " holds at most " + std::to_string(blocks) +
               " blocks of 512 tokens");
    }
    for (const auto& id : *ids) {
      if (!id.is_number_unsigned()) {
        csv.fail("hash_ids: expected whole block ids >= 0, got " + json_excerpt(id));
      }
      trace.hash_ids.push_back(id.get<std::uint64_t>());
    }
  }
  trace.hash_begin.push_back(trace.hash_ids.size());
}

}  // namespace

Trace parse_mooncake_lines(CsvCursor& csv, const std::string& source_name, std::size_t reserve) {
  Trace trace;
  trace.source_name = source_name;
  trace.arrivals.reserve(reserve);
  trace.lengths.reserve(reserve);
  trace.hash_begin.reserve(reserve + 1);
  trace.hash_begin.push_back(0);
  do {
    const auto parsed =
        parse_json_if_json(csv.line(), source_name + ":" + std::to_string(csv.line_number()));
    if (!parsed) csv.fail("malformed JSON: expected one JSON object a line (Mooncake trace)");
    const nlohmann::json& row = *parsed;
    if (!row.is_object()) csv.fail("expected one JSON object a line (Mooncake trace)");
    for (const auto& [key, value] : row.items()) {
      if (key != "timestamp" && key != "input_length" && key != "output_length" &&
          key != "hash_ids") {
        csv.fail("unknown key \"" + key +
                 "\" (a Mooncake line has timestamp, input_length, output_length, hash_ids)");
      }
    }
    const std::int64_t ns = arrival_ns(csv, row);
    if (!trace.arrivals.empty() && ns < trace.arrivals.back().ns()) {
      csv.fail("timestamp goes backwards: " + std::to_string(static_cast<double>(ns) / 1e6) +
               " ms, the line before was at " +
               std::to_string(trace.arrivals.back().seconds() * 1e3) + " ms");
    }
    const LengthPair lengths{token_count(csv, row, "input_length"),
                             token_count(csv, row, "output_length")};
    read_hash_ids(csv, row, lengths.prompt_tokens, trace);
    trace.arrivals.push_back(SimTime::from_ns(ns));
    trace.lengths.push_back(lengths);
  } while (csv.next_line());
  return trace;
}

TokenContent mooncake_content(std::span<const std::uint64_t> hash_ids, std::int64_t input_length) {
  TokenContent content;
  content.reserve(hash_ids.size());
  std::int64_t covered = 0;
  for (const std::uint64_t id : hash_ids) {
    if (covered >= input_length) break;
    const std::int64_t tokens = std::min(kMooncakeBlockTokens, input_length - covered);
    content.push_back({mix_ids(kMooncakeContent, id), tokens});
    covered += tokens;
  }
  return content;
}

}  // namespace servesim
