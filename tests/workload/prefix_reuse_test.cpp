#include <catch2/catch.hpp>

#include <filesystem>

#include "sim/core/error.h"
#include "sim/workload/prefix_reuse.h"
#include "sim/workload/shared_prefix.h"
#include "sim/workload/trace_reader.h"
#include "tests/support/test_support.h"
#include "tests/support/workload_test_support.h"

using namespace servesim;

namespace {

// The unbounded hit ratio of every request of an open-loop workload, in arrival order.
UnboundedPrefixReuse reuse_of(const WorkloadSpec& spec, std::int64_t block_tokens) {
  const auto source = make_workload_source(spec, RngStreams(7));
  UnboundedPrefixReuse reuse(block_tokens);
  while (const auto request = source->next()) {
    const auto content = source->last_content();
    reuse.add(content ? *content : TokenContent{}, request->prompt_tokens);
  }
  return reuse;
}

WorkloadSpec mooncake_spec(const std::filesystem::path& path) {
  return test::spec_from_text(R"({"arrival": {"process": "trace"},
      "lengths": {"distribution": "trace"}, "trace": {"path": ")" +
                              path.string() + R"("}})");
}

}  // namespace

TEST_CASE("prefix reuse: the longest run of leading blocks held before, capped below the prompt",
          "[workload]") {
  UnboundedPrefixReuse reuse(16);
  const TokenContent system{{1, 40}};
  CHECK(reuse.add(system, 50) == 0);  // nothing held yet
  // Two full blocks of the 40-token segment are held; the third mixes in other tokens.
  CHECK(reuse.add(TokenContent{{1, 40}, {2, 30}}, 70) == 32);
  // A prompt of exactly the 32 held tokens hits one block: its last token is computed.
  CHECK(reuse.add(system, 32) == 16);
  // Its own blocks count as held afterwards, output included where the content says so.
  CHECK(reuse.add(TokenContent{{1, 40}, {2, 30}}, 70) == 64);
  CHECK(reuse.add(TokenContent{{9, 64}}, 64) == 0);
  CHECK(reuse.prompt_tokens() == 50 + 70 + 32 + 70 + 64);
  CHECK(reuse.hit_tokens() == 32 + 16 + 64);
  CHECK(reuse.hit_ratio() == Approx(112.0 / 286.0));
  CHECK(UnboundedPrefixReuse(16).hit_ratio() == 0.0);
  CHECK_THROWS_AS(UnboundedPrefixReuse(0), InvariantError);
  CHECK_THROWS_AS(reuse.add(system, 0), InvariantError);
}

TEST_CASE(
    "prefix reuse of shared_prefix: every request but each group's first hits the "
    "system prompt's full blocks",
    "[workload]") {
  const WorkloadSpec spec = test::spec_from_text(R"({"num_requests": 60,
      "arrival": {"process": "constant", "rate_per_s": 5},
      "lengths": {"distribution": "shared_prefix", "groups": 3, "users_per_group": 2,
                  "system_prompt_tokens": 100, "question_tokens": 466, "output_tokens": 247}})");
  for (const std::int64_t block : {1, 16, 64, 100, 128}) {
    INFO("block size " << block);
    const auto reuse = reuse_of(spec, block);
    const std::int64_t hit_per_request = (100 / block) * block;
    CHECK(reuse.prompt_tokens() == 60 * 566);
    CHECK(reuse.hit_tokens() == (60 - 3) * hit_per_request);
  }
}

TEST_CASE("prefix reuse of a Mooncake trace: 512-token hash blocks mapped onto any block size",
          "[workload]") {
  const auto data = test::source_dir() / "tests" / "workload" / "data" / "mooncake_trace.jsonl";
  // Rows: 600 [0, 1], 700 [0, 2], 90 [3], 1100 [0, 1, 4]. At 512 only id 0's block is ever
  // full and shared; at 16 the last row also hits the 5 full blocks of row 0's 88-token
  // segment of id 1 (offsets 0..80 of the same content).
  const auto at_512 = reuse_of(mooncake_spec(data), 512);
  CHECK(at_512.prompt_tokens() == 2490);
  CHECK(at_512.hit_tokens() == 512 + 512);
  const auto at_16 = reuse_of(mooncake_spec(data), 16);
  CHECK(at_16.hit_tokens() == 512 + 592);
}

TEST_CASE("prefix reuse of the shared Mooncake traces matches the data README (37%, 65%)",
          "[workload]") {
  const auto shared = test::shared_data_path("traces/mooncake/conversation_trace.jsonl");
  if (!shared) return;
  const std::filesystem::path folder = shared->parent_path();
  // "about 37%" and "about 65%": stated to the percent, so within half a point.
  const auto conversation = reuse_of(mooncake_spec(folder / "conversation_trace.jsonl"), 512);
  CHECK(conversation.hit_ratio() == Approx(0.37).margin(0.005));
  const auto synthetic = reuse_of(mooncake_spec(folder / "synthetic_trace.jsonl"), 512);
  CHECK(synthetic.hit_ratio() == Approx(0.65).margin(0.005));
  // Smaller blocks find at least as much: every 512-token hit is 32 hits of 16.
  CHECK(reuse_of(mooncake_spec(folder / "conversation_trace.jsonl"), 16).hit_ratio() >=
        conversation.hit_ratio());
}
