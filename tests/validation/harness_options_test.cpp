#include <catch2/catch.hpp>

#include <string_view>
#include <vector>

#include "sim/core/error.h"
#include "tests/support/test_support.h"
#include "validation/harness_options.h"
#include "validation/harness_plan.h"

namespace sv = servesim::validation;

namespace {

sv::HarnessOptions parse(std::vector<std::string_view> args) {
  return sv::parse_harness_args(args);
}

}  // namespace

TEST_CASE("harness subcommands parse with their defaults", "[validation][harness_cli]") {
  const auto bandwidth = parse({"bandwidth"});
  CHECK(bandwidth.command == sv::HarnessCommand::Bandwidth);
  CHECK(bandwidth.size_bytes == 64ull << 20);
  CHECK(bandwidth.repeats == 20);
  CHECK(bandwidth.out_path.empty());

  const auto gemm = parse({"gemm", "--model", "llama-3-8b", "--tp", "2", "--tokens", "1,16,4096",
                           "--dtype", "fp16", "--out", "g.json", "--repeats", "7"});
  CHECK(gemm.command == sv::HarnessCommand::Gemm);
  CHECK(gemm.model == "llama-3-8b");
  CHECK(gemm.tp == 2);
  CHECK(gemm.tokens == std::vector<std::int64_t>{1, 16, 4096});
  CHECK(gemm.dtype == sv::ElementType::FP16);
  CHECK(gemm.out_path == "g.json");
  CHECK(gemm.repeats == 7);

  const auto attention = parse({"attention", "--model", "m", "--block-size", "32", "--batch", "4",
                                "--context", "100,200", "--chunk", "64", "--prefill-context", "0"});
  CHECK(attention.command == sv::HarnessCommand::Attention);
  CHECK(attention.block_size == 32);
  CHECK(attention.batch == std::vector<std::int64_t>{4});
  CHECK(attention.context_tokens == std::vector<std::int64_t>{100, 200});
  CHECK(attention.chunk_tokens == std::vector<std::int64_t>{64});
  CHECK(attention.prefill_context_tokens == std::vector<std::int64_t>{0});
  CHECK(attention.dtype == sv::ElementType::BF16);

  const auto replay = parse({"replay", "--model", "m", "--iterations", "out/iterations.csv", "--pp",
                             "2", "--max-iterations", "10", "--decode-context-tokens", "900"});
  CHECK(replay.command == sv::HarnessCommand::Replay);
  CHECK(replay.iterations_path == "out/iterations.csv");
  CHECK(replay.pp == 2);
  CHECK(replay.max_iterations == 10);
  CHECK(replay.decode_context_tokens == 900);
  CHECK(replay.repeats == 5);

  CHECK(parse({"--help"}).command == sv::HarnessCommand::Help);
  CHECK(parse({"gemm", "-h"}).command == sv::HarnessCommand::Help);
  for (const auto* name : {"bandwidth", "gemm", "attention", "replay", "exit codes"})
    CHECK(sv::harness_usage().find(name) != std::string_view::npos);
}

TEST_CASE("harness usage errors name the subcommand, flag and expectation",
          "[validation][harness_cli]") {
  using Catch::Contains;
  CHECK_THROWS_WITH(parse({}), Contains("missing subcommand"));
  CHECK_THROWS_WITH(parse({"gemmm"}), Contains("unknown subcommand 'gemmm'"));
  CHECK_THROWS_WITH(parse({"gemm"}), Contains("gemm: --model is required"));
  CHECK_THROWS_WITH(parse({"replay", "--model", "m"}), Contains("--iterations is required"));
  CHECK_THROWS_WITH(parse({"gemm", "--model", "m", "--bytes", "4"}),
                    Contains("gemm: unknown option '--bytes'"));
  CHECK_THROWS_WITH(parse({"bandwidth", "--bytes"}), Contains("--bytes needs a value"));
  CHECK_THROWS_WITH(parse({"bandwidth", "--bytes", "0"}), Contains("--bytes expects an integer"));
  CHECK_THROWS_WITH(parse({"gemm", "--model", "m", "--tokens", "1,,2"}),
                    Contains("--tokens") && Contains("''"));
  CHECK_THROWS_WITH(parse({"gemm", "--model", "m", "--tokens", "1,x"}), Contains("'x'"));
  CHECK_THROWS_WITH(parse({"gemm", "--model", "m", "--dtype", "fp32"}), Contains("--dtype"));
  CHECK_THROWS_WITH(parse({"attention", "--model", "m", "--repeats", "-1"}), Contains("--repeats"));
  CHECK_THROWS_AS(parse({"replay", "--model", "m", "--iterations", "f", "--tokens", "1"}),
                  servesim::UsageError);
  // Block size 0 is the contiguous cache, so it is allowed.
  CHECK(parse({"attention", "--model", "m", "--block-size", "0"}).block_size == 0);
}

TEST_CASE("harness plans list every shape a subcommand will measure", "[validation][harness_cli]") {
  const auto root = servesim::test::source_dir();
  const auto gemm =
      sv::plan_gemms(parse({"gemm", "--model", "llama-3-8b", "--tokens", "1,64"}), root);
  REQUIRE(gemm.gemms.size() == 10);
  CHECK(gemm.gemms[0].op == "qkv");
  CHECK(gemm.gemms[4].op == "lm_head");
  CHECK(gemm.gemms[4].m == 1);
  CHECK(gemm.gemms[5].m == 64);
  CHECK(gemm.gemms[9].n == 128256);

  const auto attention = sv::plan_attention(
      parse({"attention", "--model", "llama-3-8b", "--tp", "2", "--batch", "1,4", "--context",
             "256", "--chunk", "128", "--prefill-context", "0,512"}),
      root);
  REQUIRE(attention.decode.size() == 4);  // (1, 4) x 256, contiguous and paged
  CHECK(attention.decode[0].block_size == 0);
  CHECK(attention.decode[1].block_size == 16);
  CHECK(attention.decode[3].batch == 4);
  CHECK(attention.decode[3].heads.num_heads == 16);
  CHECK(attention.decode[3].heads.num_kv_heads == 4);
  REQUIRE(attention.prefill.size() == 2);
  CHECK(attention.prefill[1].context_tokens == 512);
  CHECK(attention.prefill[1].chunk_tokens == 128);
  const auto contiguous_only =
      sv::plan_attention(parse({"attention", "--model", "llama-3-8b", "--block-size", "0"}), root);
  CHECK(contiguous_only.decode.size() == 6);

  CHECK_THROWS_WITH(sv::plan_gemms(parse({"gemm", "--model", "llama-3-8b", "--tp", "3"}), root),
                    Catch::Contains("--tp"));
  CHECK_THROWS_AS(sv::plan_replay(parse({"replay", "--model", "llama-3-8b", "--iterations",
                                         "/nonexistent/iterations.csv"}),
                                  root),
                  servesim::InputError);
}
