#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <vector>

#include "sim/core/error.h"
#include "tests/support/test_support.h"
#include "validation/iterations_csv.h"

namespace sv = servesim::validation;

namespace {

// The header servesim run wrote before iterations.csv carried the batch sums it priced.
const std::string kHeader =
    "replica,start_s,duration_s,batch_size,prefill_tokens,decode_tokens,preempted,"
    "kv_used_tokens,kv_capacity_tokens,kv_utilization,kv_token_states,kv_reserved,"
    "kv_internal_fragmentation,kv_external_fragmentation,kv_free\n";

std::string row(const std::string& duration, int batch, int prefill, int decode) {
  return "0,1.5," + duration + "," + std::to_string(batch) + "," + std::to_string(prefill) + "," +
         std::to_string(decode) + ",0,100,1000,0.1,100,0,0,0,900\n";
}

}  // namespace

TEST_CASE("an older iterations.csv reads with an assumed decode context",
          "[validation][iterations]") {
  const std::string text =
      kHeader + row("0.025", 2, 700, 0) + row("0.0125", 5, 0, 5) + row("0.03", 4, 300, 3);
  const sv::IterationsFile file = sv::parse_iterations_csv(text, "it.csv", 1000);
  CHECK_FALSE(file.exact_shapes);
  REQUIRE(file.rows.size() == 3);

  const sv::IterationRow& prefill = file.rows[0];
  CHECK(prefill.line == 2);
  CHECK(prefill.predicted_s == 0.025);
  CHECK(prefill.shape.prefill_sequences == 2);
  CHECK(prefill.shape.prefill_tokens == 700);
  CHECK(prefill.shape.prefill_context_tokens == 700);
  CHECK(prefill.shape.prefill_attention_pairs == 350.0 * 351 / 2 * 2);
  CHECK(prefill.shape.decode_sequences == 0);
  CHECK(prefill.shape.sampled_sequences == 2);

  const sv::IterationRow& decode = file.rows[1];
  CHECK(decode.shape.decode_sequences == 5);
  CHECK(decode.shape.decode_context_tokens == 5000);
  CHECK(decode.shape.prefill_sequences == 0);

  const sv::IterationRow& mixed = file.rows[2];
  CHECK(mixed.line == 4);
  CHECK(mixed.shape.prefill_sequences == 1);
  CHECK(mixed.shape.decode_sequences == 3);
  CHECK(mixed.shape.tokens() == 303);
}

TEST_CASE("iterations.csv with the batch-shape columns is read exactly",
          "[validation][iterations]") {
  const std::string text =
      "duration_s,batch_size,prefill_tokens,decode_tokens,prefill_sequences,"
      "prefill_context_tokens,prefill_attention_pairs,decode_sequences,decode_context_tokens,"
      "sampled_sequences\n"
      "0.02,3,512,2,1,1024,393472,2,3001,2\n";
  const sv::IterationsFile file = sv::parse_iterations_csv(text, "exact.csv", std::nullopt);
  CHECK(file.exact_shapes);
  REQUIRE(file.rows.size() == 1);
  const servesim::BatchShape& s = file.rows[0].shape;
  CHECK(s.prefill_sequences == 1);
  CHECK(s.prefill_context_tokens == 1024);
  CHECK(s.prefill_attention_pairs == 393472.0);
  CHECK(s.decode_context_tokens == 3001);
  CHECK(s.sampled_sequences == 2);                   // the chunk did not finish its prompt
  CHECK(s.prefill_masked_pairs == 512.0 * 511 / 2);  // one chunk: no other split
  // With the column, an assumed decode context is not used.
  const sv::IterationsFile assumed = sv::parse_iterations_csv(text, "exact.csv", 7);
  CHECK(assumed.rows[0].shape.decode_context_tokens == 3001);
}

TEST_CASE("bad iterations.csv input names the file, line and column", "[validation][iterations]") {
  using Catch::Contains;
  CHECK_THROWS_WITH(sv::parse_iterations_csv("", "e.csv", 1),
                    Contains("e.csv") && Contains("empty"));
  CHECK_THROWS_WITH(sv::parse_iterations_csv(kHeader, "h.csv", 1), Contains("no rows"));
  CHECK_THROWS_WITH(
      sv::parse_iterations_csv("duration_s,batch_size,prefill_tokens\n1,1,1\n", "m.csv", 1),
      Contains("m.csv:1") && Contains("decode_tokens"));
  // Decoding rows need their context: a column or an assumption.
  CHECK_THROWS_WITH(sv::parse_iterations_csv(kHeader + row("0.01", 5, 0, 5), "d.csv", std::nullopt),
                    Contains("d.csv:2") && Contains("--decode-context-tokens"));
  CHECK_THROWS_WITH(
      sv::parse_iterations_csv(kHeader + row("0.01", 1, 16, 0) + row("x", 1, 1, 0), "n.csv", 1),
      Contains("n.csv:3") && Contains("duration_s"));
  CHECK_THROWS_WITH(sv::parse_iterations_csv(kHeader + row("-1", 1, 16, 0), "n.csv", 1),
                    Contains("n.csv:2") && Contains("positive"));
  CHECK_THROWS_WITH(sv::parse_iterations_csv(kHeader + row("0.01", 1, -16, 0), "c.csv", 1),
                    Contains("c.csv:2") && Contains("prefill_tokens"));
  CHECK_THROWS_WITH(sv::parse_iterations_csv(kHeader + row("0.01", 1, 16, 4), "b.csv", 1),
                    Contains("b.csv:2") && Contains("batch_size"));
  CHECK_THROWS_WITH(sv::parse_iterations_csv(kHeader + row("0.01", 0, 0, 0), "z.csv", 1),
                    Contains("z.csv:2") && Contains("without tokens"));
  CHECK_THROWS_WITH(sv::parse_iterations_csv(kHeader + "0,1,2\n", "f.csv", 1),
                    Contains("f.csv:2") && Contains("fields"));
  CHECK_THROWS_AS(sv::read_iterations_csv("/nonexistent/iterations.csv", 1), servesim::InputError);
}

TEST_CASE("replay picks iterations evenly over the file", "[validation][iterations]") {
  std::vector<sv::IterationRow> rows(10);
  for (std::size_t i = 0; i < rows.size(); ++i)
    rows[i].line = i + 2;
  const auto three = sv::select_evenly(rows, 3);
  REQUIRE(three.size() == 3);
  CHECK(three[0].line == 2);
  CHECK(three[1].line == 6);
  CHECK(three[2].line == 11);
  CHECK(sv::select_evenly(rows, 20).size() == 10);
  CHECK(sv::select_evenly(rows, 1).at(0).line == 2);
  CHECK(sv::select_evenly(rows, 0).empty());
}

TEST_CASE("iterations.csv from a real servesim run reads back", "[validation][iterations]") {
  servesim::test::ScratchDir dir("harness_iterations");
  const auto result = servesim::test::run_servesim(
      {"run", "--model", "llama-3-8b", "--num-requests", "20", "--out", dir.path().string()});
  if (result.exit_code != 0) {
    WARN("servesim run failed here, skipping: " << result.err);
    return;
  }
  const auto path = dir.path() / "iterations.csv";
  if (!std::filesystem::exists(path)) {
    WARN("servesim run wrote no iterations.csv, skipping");
    return;
  }
  // servesim run writes the batch sums: no assumed decode context is needed.
  const sv::IterationsFile file = sv::read_iterations_csv(path, std::nullopt);
  CHECK(file.exact_shapes);
  REQUIRE_FALSE(file.rows.empty());
  bool decoded = false;
  for (const auto& r : file.rows) {
    CHECK(r.predicted_s > 0);
    CHECK_FALSE(r.shape.empty());
    CHECK(r.shape.decode_context_tokens >= r.shape.decode_sequences);
    decoded = decoded || r.shape.decode_sequences > 0;
  }
  CHECK(decoded);
}

TEST_CASE("the replay fixture reads with exact batch shapes", "[validation][iterations]") {
  const auto path =
      servesim::test::source_dir() / "tests" / "validation" / "data" / "iterations.csv";
  const sv::IterationsFile file = sv::read_iterations_csv(path, std::nullopt);
  CHECK(file.exact_shapes);
  REQUIRE(file.rows.size() == 4);
  // Two prompts of 300 tokens: 2 x 300 x 301 / 2 query-key pairs.
  CHECK(file.rows[0].shape.prefill_attention_pairs == 90300.0);
  CHECK(file.rows[0].shape.prefill_sequences == 2);
  CHECK(file.rows[2].shape.prefill_context_tokens == 1024);
  CHECK(file.rows[2].shape.decode_context_tokens == 2204);
  CHECK(file.rows[3].shape.decode_sequences == 16);
  CHECK(file.rows[3].predicted_s == 0.0098);
}
