#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/hardware/batch_shape.h"

namespace servesim::validation {

// One iteration of `servesim run`'s iterations.csv: its batch shape and the duration the
// simulator predicted for it.
struct IterationRow {
  std::size_t line = 0;  // 1-based line in the file, for messages
  double predicted_s = 0.0;
  BatchShape shape;
};

struct IterationsFile {
  std::vector<IterationRow> rows;
  // False when the file lacks the context columns and the shapes were reconstructed (see
  // parse_iterations_csv); replay then reports an approximation of the simulated batches.
  bool exact_shapes = false;
};

// Reads iterations.csv by column name (order and extra columns do not matter). Required:
// duration_s, batch_size, prefill_tokens, decode_tokens. Used when present, reconstructed
// when absent: decode_sequences (= decode_tokens), prefill_sequences (= batch_size -
// decode_sequences), prefill_context_tokens (= prefill_tokens: no cached prefix),
// prefill_attention_pairs and prefill_masked_pairs (from chunks of equal length),
// sampled_sequences (every sequence), and decode_context_tokens (=
// assumed_decode_context_tokens x decode_sequences, only for files written before servesim
// run wrote the column; without the column or the assumption, a file with decode tokens is
// refused). A file with the columns gives the sums the simulator priced, and the assumption
// is not used. Errors are InputErrors naming the file and line.
IterationsFile parse_iterations_csv(std::string_view text, const std::string& source_name,
                                    std::optional<std::int64_t> assumed_decode_context_tokens);
IterationsFile read_iterations_csv(const std::filesystem::path& path,
                                   std::optional<std::int64_t> assumed_decode_context_tokens);

// At most `limit` rows spread evenly over the file, first and last included, in file order.
std::vector<IterationRow> select_evenly(const std::vector<IterationRow>& rows, std::size_t limit);

}  // namespace servesim::validation
