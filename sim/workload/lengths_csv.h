#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "sim/workload/length_distribution.h"

namespace servesim {

// Reads (prompt, output) pairs from a CSV whose header names the columns
// "num_prefill_tokens" and "num_decode_tokens" (Vidur's length files) or "prompt_tokens" and
// "output_tokens", in any position; other columns are ignored. Errors name the file and line.
std::vector<LengthPair> read_lengths_csv(const std::filesystem::path& path);
std::vector<LengthPair> parse_lengths_csv(std::string_view text, const std::string& source_name);

}  // namespace servesim
