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
  CHECK(gemm.timing == sv::TimingMode::PerCall);  // the original timing stays the default

  const auto graph = parse({"gemm", "--model", "llama-3-8b", "--timing", "graph", "--calls", "50"});
  CHECK(graph.timing == sv::TimingMode::Graph);
  CHECK(graph.calls == 50);
  const auto stream = parse({"gemm", "--model", "llama-3-8b", "--timing", "stream"});
  CHECK(stream.timing == sv::TimingMode::Stream);
  CHECK(stream.calls == 20);
  CHECK(parse({"gemm", "--model", "m", "--timing", "per_call"}).timing == sv::TimingMode::PerCall);
  for (const auto mode : {sv::TimingMode::PerCall, sv::TimingMode::Stream, sv::TimingMode::Graph})
    CHECK(parse({"gemm", "--model", "m", "--timing", sv::timing_mode_name(mode)}).timing == mode);

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
  CHECK_THROWS_WITH(parse({"gemm", "--model", "m", "--timing", "events"}),
                    Contains("--timing expects per_call, stream or graph") && Contains("'events'"));
  CHECK_THROWS_WITH(parse({"gemm", "--model", "m", "--calls", "5"}),
                    Contains("gemm: --calls needs --timing stream or graph"));
  CHECK_THROWS_WITH(parse({"gemm", "--model", "m", "--timing", "graph", "--calls", "0"}),
                    Contains("--calls expects an integer"));
  CHECK_THROWS_WITH(parse({"attention", "--model", "m", "--timing", "graph"}),
                    Contains("attention: unknown option '--timing'"));
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

TEST_CASE("quant-gemm and moe-gemm parse with their own defaults", "[validation][harness_cli]") {
  const auto quant = parse({"quant-gemm", "--model", "llama-3-8b"});
  CHECK(quant.command == sv::HarnessCommand::QuantGemm);
  CHECK(quant.tokens == std::vector<std::int64_t>{1, 2, 4, 8, 16});
  CHECK(quant.formats ==
        std::vector<sv::WeightFormat>{sv::WeightFormat::Int4, sv::WeightFormat::Fp8});
  CHECK(quant.group_size == 128);
  CHECK(quant.repeats == 20);
  const auto fp8 = parse({"quant-gemm", "--model", "m", "--formats", "fp8,FP8", "--group-size",
                          "64", "--tokens", "3,64", "--dtype", "fp16"});
  CHECK(fp8.formats == std::vector<sv::WeightFormat>{sv::WeightFormat::Fp8});
  CHECK(fp8.group_size == 64);
  CHECK(fp8.tokens == std::vector<std::int64_t>{3, 64});
  CHECK(fp8.dtype == sv::ElementType::FP16);

  const auto moe = parse({"moe-gemm", "--model", "qwen3-30b-a3b"});
  CHECK(moe.command == sv::HarnessCommand::MoeGemm);
  CHECK(moe.tokens == std::vector<std::int64_t>{1, 4, 16, 64, 256});
  CHECK(moe.tile_rows == std::vector<std::int64_t>{16});
  CHECK(moe.seed == 1);
  const auto tiles = parse(
      {"moe-gemm", "--model", "m", "--tile-rows", "16,32,64", "--seed", "0", "--tokens", "65536"});
  CHECK(tiles.tile_rows == std::vector<std::int64_t>{16, 32, 64});
  CHECK(tiles.seed == 0);
  CHECK(tiles.tokens == std::vector<std::int64_t>{65536});
  // The gemm subcommand keeps its own defaults and range.
  CHECK(parse({"gemm", "--model", "m", "--tokens", "4096"}).tokens ==
        std::vector<std::int64_t>{4096});
  for (const auto* name : {"quant-gemm", "moe-gemm", "--formats", "--tile-rows", "--group-size"})
    CHECK(sv::harness_usage().find(name) != std::string_view::npos);
}

TEST_CASE("quant-gemm and moe-gemm usage errors are one line naming the flag",
          "[validation][harness_cli]") {
  using Catch::Contains;
  CHECK_THROWS_WITH(parse({"quant-gemm"}), "quant-gemm: --model is required");
  CHECK_THROWS_WITH(parse({"moe-gemm", "--tokens", "4"}), "moe-gemm: --model is required");
  CHECK_THROWS_WITH(parse({"quant-gemm", "--model", "m", "--tokens", "1,128"}),
                    "--tokens expects an integer in [1, 64], got '128'");
  CHECK_THROWS_WITH(parse({"moe-gemm", "--model", "m", "--tokens", "65537"}),
                    "--tokens expects an integer in [1, 65536], got '65537'");
  CHECK_THROWS_WITH(parse({"quant-gemm", "--model", "m", "--formats", "int4,int8"}),
                    "--formats expects int4 or fp8, got 'int8'");
  CHECK_THROWS_WITH(parse({"quant-gemm", "--model", "m", "--formats", "int4,"}),
                    "--formats expects int4 or fp8, got ''");
  CHECK_THROWS_WITH(parse({"quant-gemm", "--model", "m", "--group-size", "100"}),
                    "--group-size expects a multiple of 8, got '100'");
  CHECK_THROWS_WITH(parse({"quant-gemm", "--model", "m", "--group-size", "4"}),
                    Contains("--group-size expects an integer in [8, 65536]"));
  CHECK_THROWS_WITH(parse({"moe-gemm", "--model", "m", "--tile-rows", "16,48"}),
                    "--tile-rows expects 16, 32 or 64, got '48'");
  CHECK_THROWS_WITH(parse({"moe-gemm", "--model", "m", "--tile-rows", "128"}),
                    Contains("--tile-rows expects an integer in [1, 64]"));
  CHECK_THROWS_WITH(parse({"moe-gemm", "--model", "m", "--seed", "-1"}),
                    Contains("--seed expects an integer"));
  CHECK_THROWS_WITH(parse({"moe-gemm", "--model", "m", "--formats", "int4"}),
                    "moe-gemm: unknown option '--formats'");
  CHECK_THROWS_WITH(parse({"quant-gemm", "--model", "m", "--tile-rows", "16"}),
                    "quant-gemm: unknown option '--tile-rows'");
  CHECK_THROWS_WITH(parse({"quant-gemm", "--model", "m", "--group-size"}),
                    "quant-gemm: --group-size needs a value");
  CHECK_THROWS_WITH(parse({"moe-gem"}),
                    Contains("unknown subcommand 'moe-gem'") && Contains("quant-gemm or moe-gemm"));
}

TEST_CASE("quant-gemm plans four layer GEMMs per format and token count",
          "[validation][harness_cli]") {
  const auto root = servesim::test::source_dir();
  const auto plan = sv::plan_quant_gemms(
      parse({"quant-gemm", "--model", "llama-3-8b", "--tokens", "1,16"}), root);
  REQUIRE(plan.gemms.size() == 16);  // 2 formats x 2 token counts x qkv, o, mlp_up, mlp_down
  CHECK(plan.gemms[0].format == sv::WeightFormat::Int4);
  CHECK(plan.gemms[0].gemm.op == "qkv");
  CHECK(plan.gemms[0].gemm.m == 1);
  CHECK(plan.gemms[0].gemm.n == 6144);  // (32 + 2 x 8) x 128
  CHECK(plan.gemms[0].gemm.k == 4096);
  CHECK(plan.gemms[3].gemm.op == "mlp_down");
  CHECK(plan.gemms[3].gemm.k == 14336);
  CHECK(plan.gemms[4].gemm.m == 16);
  CHECK(plan.gemms[8].format == sv::WeightFormat::Fp8);
  CHECK(plan.gemms[10].gemm.n == 28672);  // gate and up fused
  // A mixture of experts: one expert's MLP at the token count itself, not its routed share.
  const auto moe = sv::plan_quant_gemms(
      parse({"quant-gemm", "--model", "qwen3-30b-a3b", "--tokens", "8", "--formats", "int4"}),
      root);
  REQUIRE(moe.gemms.size() == 4);
  CHECK(moe.gemms[2].gemm.m == 8);
  CHECK(moe.gemms[2].gemm.n == 1536);
  CHECK(moe.gemms[3].gemm.k == 768);
  // 96 divides no k of Llama-3-8B's layer (4096 = 2^12).
  CHECK_THROWS_WITH(sv::plan_quant_gemms(
                        parse({"quant-gemm", "--model", "llama-3-8b", "--group-size", "96"}), root),
                    Catch::Contains("--group-size 96") && Catch::Contains("k = 4096"));
  CHECK_THROWS_AS(sv::plan_quant_gemms(parse({"quant-gemm", "--model", "no-such-model"}), root),
                  servesim::InputError);
}

TEST_CASE("moe-gemm plans the expert GEMMs of a routed step", "[validation][harness_cli]") {
  const auto root = servesim::test::source_dir();
  const auto plan = sv::plan_moe_gemms(
      parse({"moe-gemm", "--model", "qwen3-30b-a3b", "--tokens", "1,16", "--tile-rows", "16,64"}),
      root);
  REQUIRE(plan.cases.size() == 8);  // 2 tiles x 2 token counts x mlp_up, mlp_down
  const sv::MoeGemmCase& up = plan.cases[0];
  CHECK(up.shape.op == "mlp_up");
  CHECK(up.shape.experts == 128);
  CHECK(up.shape.top_k == 8);
  CHECK(up.shape.n == 1536);  // gate and up of 768
  CHECK(up.shape.k == 2048);
  CHECK_FALSE(up.shape.activation_per_pair);
  CHECK(up.groups.experts_touched.size() == 8);  // one token: top_k experts
  CHECK(up.groups.padded_rows == 128);
  const sv::MoeGemmCase& down = plan.cases[1];
  CHECK(down.shape.op == "mlp_down");
  CHECK(down.shape.n == 2048);
  CHECK(down.shape.k == 768);
  CHECK(down.shape.activation_per_pair);
  // The same tokens route the same way at every tile height; only the padding differs.
  const sv::MoeGemmCase& up16 = plan.cases[2];
  const sv::MoeGemmCase& up16_tile64 = plan.cases[6];
  CHECK(up16.shape.tokens == 16);
  CHECK(up16_tile64.shape.tile_rows == 64);
  CHECK(up16.groups.experts_touched == up16_tile64.groups.experts_touched);
  CHECK(up16.groups.routed_rows == 128);
  CHECK(up16_tile64.groups.padded_rows ==
        64 * static_cast<std::int64_t>(up16.groups.experts_touched.size()));

  const auto tp2 =
      sv::plan_moe_gemms(parse({"moe-gemm", "--model", "qwen3-30b-a3b", "--tp", "2"}), root);
  CHECK(tp2.cases[0].shape.n == 768);
  const auto gpt_oss =
      sv::plan_moe_gemms(parse({"moe-gemm", "--model", "gpt-oss-20b", "--tokens", "4"}), root);
  CHECK(gpt_oss.cases[0].shape.experts == 32);
  CHECK(gpt_oss.cases[0].shape.top_k == 4);
  CHECK(gpt_oss.cases[0].shape.n == 5760);
  CHECK(gpt_oss.cases[1].shape.k == 2880);
  CHECK_THROWS_WITH(
      sv::plan_moe_gemms(parse({"moe-gemm", "--model", "llama-3-8b"}), root),
      Catch::Contains("--model llama-3-8b") && Catch::Contains("not a mixture-of-experts model"));
}
