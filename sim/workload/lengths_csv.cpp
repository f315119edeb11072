#include "sim/workload/lengths_csv.h"

#include <algorithm>
#include <array>
#include <utility>

#include "sim/core/error.h"
#include "sim/workload/csv_cursor.h"

namespace servesim {
namespace {

constexpr std::array<std::pair<std::string_view, std::string_view>, 2> kColumnPairs{{
    {"num_prefill_tokens", "num_decode_tokens"},
    {"prompt_tokens", "output_tokens"},
}};

}  // namespace

std::vector<LengthPair> parse_lengths_csv(std::string_view text, const std::string& source_name) {
  CsvCursor csv(text, source_name);
  if (!csv.next_line()) throw InputError(source_name, "empty lengths file (no header, no rows)");
  const auto header = csv.fields();
  const auto column = [&](std::string_view name) {
    return static_cast<std::size_t>(std::find(header.begin(), header.end(), name) - header.begin());
  };
  std::size_t prompt_column = header.size();
  std::size_t output_column = header.size();
  for (const auto& [prompt_name, output_name] : kColumnPairs) {
    if (column(prompt_name) < header.size() && column(output_name) < header.size()) {
      prompt_column = column(prompt_name);
      output_column = column(output_name);
      break;
    }
  }
  if (prompt_column == header.size()) {
    csv.fail(
        "header needs columns num_prefill_tokens and num_decode_tokens (or prompt_tokens and "
        "output_tokens)");
  }

  std::vector<LengthPair> pairs;
  while (csv.next_line()) {
    csv.expect_fields(header.size());
    pairs.push_back({csv.positive_integer(prompt_column, header[prompt_column]),
                     csv.positive_integer(output_column, header[output_column])});
  }
  if (pairs.empty()) throw InputError(source_name, "lengths file has a header but no rows");
  return pairs;
}

std::vector<LengthPair> read_lengths_csv(const std::filesystem::path& path) {
  return parse_lengths_csv(read_text_file(path), path.string());
}

}  // namespace servesim
