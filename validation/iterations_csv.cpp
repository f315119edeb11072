#include "validation/iterations_csv.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "sim/core/error.h"
#include "sim/workload/csv_cursor.h"
#include "validation/attention_batch.h"

namespace servesim::validation {
namespace {

constexpr std::size_t kMissing = static_cast<std::size_t>(-1);

std::int64_t count_field(const CsvCursor& csv, std::size_t index, std::string_view column) {
  const std::string_view field = csv.fields().at(index);
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), value);
  if (ec != std::errc() || end != field.data() + field.size() || value < 0) {
    csv.fail(std::string(column) + ": expected a non-negative integer, got '" + std::string(field) +
             "'");
  }
  return value;
}

// Attention pairs of `sequences` chunks sharing `tokens` new and `cached` cached tokens as
// evenly as possible, as replay will run them.
// The prompt chunks of an iteration whose file gives only their sums, split evenly.
BatchShape even_prefill(std::int64_t sequences, std::int64_t tokens, std::int64_t cached) {
  BatchShape shape;
  if (sequences == 0) return shape;
  const auto chunks = split_evenly(tokens, sequences);
  const auto prefixes = split_evenly(cached, sequences);
  for (std::size_t i = 0; i < chunks.size(); ++i)
    shape.add_prefill(chunks[i], prefixes[i]);
  return shape;
}

}  // namespace

IterationsFile parse_iterations_csv(std::string_view text, const std::string& source_name,
                                    std::optional<std::int64_t> assumed_decode_context_tokens) {
  CsvCursor csv(text, source_name);
  if (!csv.next_line()) throw InputError(source_name, "empty iterations file (no header)");
  const std::vector<std::string_view> header = csv.fields();
  const auto column = [&header](std::string_view name) {
    const auto at = std::find(header.begin(), header.end(), name);
    return at == header.end() ? kMissing : static_cast<std::size_t>(at - header.begin());
  };
  for (const std::string_view required :
       {"duration_s", "batch_size", "prefill_tokens", "decode_tokens"}) {
    if (column(required) == kMissing) {
      csv.fail("missing column '" + std::string(required) +
               "' (expected the iterations.csv written by servesim run --out DIR)");
    }
  }
  const std::size_t decode_context = column("decode_context_tokens");
  const std::size_t prefill_context = column("prefill_context_tokens");
  IterationsFile file;
  file.exact_shapes = decode_context != kMissing && prefill_context != kMissing &&
                      column("prefill_sequences") != kMissing;

  while (csv.next_line()) {
    csv.expect_fields(header.size());
    const auto count = [&](std::string_view name, std::int64_t fallback) {
      const std::size_t index = column(name);
      return index == kMissing ? fallback : count_field(csv, index, name);
    };
    IterationRow row;
    row.line = csv.line_number();
    row.predicted_s = csv.finite_number(column("duration_s"), "duration_s");
    if (!(row.predicted_s > 0.0)) csv.fail("duration_s: expected a positive duration");
    BatchShape& shape = row.shape;
    const std::int64_t batch_size = count("batch_size", 0);
    shape.prefill_tokens = count("prefill_tokens", 0);
    shape.decode_sequences = count("decode_sequences", count("decode_tokens", 0));
    shape.prefill_sequences = count("prefill_sequences", batch_size - shape.decode_sequences);
    if (shape.prefill_sequences < 0 ||
        (shape.prefill_tokens > 0) != (shape.prefill_sequences > 0) ||
        shape.prefill_sequences > shape.prefill_tokens) {
      csv.fail("batch_size " + std::to_string(batch_size) + " does not fit prefill_tokens " +
               std::to_string(shape.prefill_tokens) + " and " +
               std::to_string(shape.decode_sequences) + " decoding sequences");
    }
    if (shape.empty()) csv.fail("an iteration without tokens");
    shape.prefill_context_tokens = count("prefill_context_tokens", shape.prefill_tokens);
    if (shape.prefill_context_tokens < shape.prefill_tokens) {
      csv.fail("prefill_context_tokens is smaller than prefill_tokens");
    }
    const BatchShape even = even_prefill(shape.prefill_sequences, shape.prefill_tokens,
                                         shape.prefill_context_tokens - shape.prefill_tokens);
    const auto pairs = [&](std::string_view name, double fallback) {
      const std::size_t index = column(name);
      return index == kMissing ? fallback : csv.finite_number(index, name);
    };
    shape.prefill_attention_pairs = pairs("prefill_attention_pairs", even.prefill_attention_pairs);
    shape.prefill_masked_pairs = pairs("prefill_masked_pairs", even.prefill_masked_pairs);
    if (decode_context != kMissing) {
      shape.decode_context_tokens = count_field(csv, decode_context, "decode_context_tokens");
    } else if (shape.decode_sequences > 0) {
      if (!assumed_decode_context_tokens) {
        csv.fail(
            "no column 'decode_context_tokens' for the decoding sequences' contexts; pass "
            "--decode-context-tokens N to assume N tokens per decoding sequence");
      }
      shape.decode_context_tokens = *assumed_decode_context_tokens * shape.decode_sequences;
    }
    if (shape.decode_context_tokens < shape.decode_sequences) {
      csv.fail("decode_context_tokens is smaller than the number of decoding sequences");
    }
    shape.sampled_sequences =
        count("sampled_sequences", shape.prefill_sequences + shape.decode_sequences);
    file.rows.push_back(row);
  }
  if (file.rows.empty()) throw InputError(source_name, "iterations file has a header but no rows");
  return file;
}

IterationsFile read_iterations_csv(const std::filesystem::path& path,
                                   std::optional<std::int64_t> assumed_decode_context_tokens) {
  return parse_iterations_csv(read_text_file(path), path.string(), assumed_decode_context_tokens);
}

std::vector<IterationRow> select_evenly(const std::vector<IterationRow>& rows, std::size_t limit) {
  if (limit == 0 || rows.size() <= limit) {
    return limit == 0 ? std::vector<IterationRow>{} : rows;
  }
  std::vector<IterationRow> chosen;
  for (std::size_t i = 0; i < limit; ++i) {
    // Spread indices over [0, size - 1]; limit 1 takes the first row.
    const std::size_t index = limit == 1 ? 0 : i * (rows.size() - 1) / (limit - 1);
    chosen.push_back(rows[index]);
  }
  return chosen;
}

}  // namespace servesim::validation
