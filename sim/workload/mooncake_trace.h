#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "sim/workload/csv_cursor.h"
#include "sim/workload/token_content.h"
#include "sim/workload/trace_reader.h"

namespace servesim {

// Mooncake's traces (kvcache-ai/Mooncake, FAST25-release/traces; Qin et al., FAST 2025) name
// the prompt's blocks of 512 tokens.
inline constexpr std::int64_t kMooncakeBlockTokens = 512;

// Reads the JSON lines from the cursor's current line on: one object a line with the arrival
// "timestamp" in milliseconds, "input_length" and "output_length" in tokens (integers >= 1),
// and "hash_ids", the prompt's 512-token blocks chained over the prefix (integers >= 0, at most
// ceil(input_length / 512) of them; optional). Errors name the file, the line and the field.
Trace parse_mooncake_lines(CsvCursor& csv, const std::string& source_name, std::size_t reserve);

// What a Mooncake prompt is made of: one segment per hash id (id mix_ids(kMooncakeContent,
// hash id)) of 512 tokens, the last one cut at input_length, so the content covers
// min(input_length, 512 x ids) tokens exactly; any block size maps onto it through
// block_hashes. Requests sharing the first k hash ids share their first 512 k tokens.
TokenContent mooncake_content(std::span<const std::uint64_t> hash_ids, std::int64_t input_length);

}  // namespace servesim
