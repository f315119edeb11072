#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/sim_time.h"
#include "sim/workload/length_distribution.h"
#include "sim/workload/token_content.h"

namespace servesim {

// A request trace: one arrival and one length pair per row, arrivals non-decreasing. A trace
// that says what its prompts are made of (Mooncake's hash_ids) keeps, per row, its block ids:
// row i's are hash_ids[hash_begin[i] .. hash_begin[i + 1]); hash_begin is empty otherwise.
struct Trace {
  std::string source_name;
  std::vector<SimTime> arrivals;
  std::vector<LengthPair> lengths;
  std::vector<std::uint64_t> hash_ids;
  std::vector<std::size_t> hash_begin;
  std::size_t size() const { return arrivals.size(); }
  bool has_content() const { return !hash_begin.empty(); }
  std::span<const std::uint64_t> row_hash_ids(std::size_t row) const {
    return std::span(hash_ids).subspan(hash_begin[row], hash_begin[row + 1] - hash_begin[row]);
  }
  // Row `row`'s content (mooncake_content of its hash ids); empty without content.
  TokenContent content(std::size_t row) const;
};

// Rows [first_row, end_row) of a trace (end_row defaults to its end), their arrivals counted
// from the first one kept when first_row > 0 (it arrives at t = 0). A range outside the trace
// is an InputError naming `where`, the trace.first_row or trace.end_row field and the trace's
// row count.
Trace trace_rows(Trace trace, std::int64_t first_row, std::optional<std::int64_t> end_row,
                 const std::string& where);

// Reads a trace, telling the format from its header:
//  - Azure LLM inference trace: "TIMESTAMP,ContextTokens,GeneratedTokens", timestamps like
//    "2023-11-16 18:15:46.6805900"; arrivals count from the first row, exact to the ns.
//  - plain: "arrival_time_s,prompt_tokens,output_tokens", arrivals in seconds as written.
//  - Mooncake (FAST 2025) JSON lines, told by a first line that is a JSON object:
//    {"timestamp": ms, "input_length": N, "output_length": M, "hash_ids": [...]}; arrivals
//    are the timestamps as written, in ms; hash_ids are kept (mooncake_trace.h).
// Errors name the file and line: bad header, wrong field count or key, unparsable number,
// token count below 1, a timestamp earlier than the row before, or no data rows.
Trace read_trace_file(const std::filesystem::path& path);
Trace parse_trace_text(std::string_view text, const std::string& source_name);

// What a file given as a workload holds, told by its content: a trace in one of the formats
// above (its header, or a first line that is a JSON object with "input_length"), or a JSON
// workload spec (text starting with '{'). Anything else is an InputError naming the file, its
// first line and the formats expected.
enum class WorkloadFileKind { Spec, Trace };
WorkloadFileKind workload_file_kind(const std::filesystem::path& path);

}  // namespace servesim
