#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/sim_time.h"
#include "sim/workload/length_distribution.h"

namespace servesim {

// A request trace: one arrival and one length pair per row, arrivals non-decreasing.
struct Trace {
  std::string source_name;
  std::vector<SimTime> arrivals;
  std::vector<LengthPair> lengths;
  std::size_t size() const { return arrivals.size(); }
};

// Reads a trace, telling the format from its header:
//  - Azure LLM inference trace: "TIMESTAMP,ContextTokens,GeneratedTokens", timestamps like
//    "2023-11-16 18:15:46.6805900"; arrivals count from the first row, exact to the ns.
//  - plain: "arrival_time_s,prompt_tokens,output_tokens", arrivals in seconds as written.
//  - Mooncake (FAST 2025) JSON lines, told by a first line that is a JSON object:
//    {"timestamp": ms, "input_length": N, "output_length": M, "hash_ids": [...]}; arrivals
//    are the timestamps as written, in ms; hash_ids are not kept.
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
