#include <catch2/catch.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "sim/core/error.h"
#include "tests/support/test_support.h"
#include "validation/harness_options.h"
#include "validation/harness_plan.h"

namespace sv = servesim::validation;
using Catch::Contains;

namespace {

sv::HarnessOptions parse(std::vector<std::string_view> args) {
  return sv::parse_harness_args(args);
}

}  // namespace

TEST_CASE("gemm takes --dtype fp8: e4m3 operands with a bf16 output", "[validation][harness_cli]") {
  const auto fp8 = parse({"gemm", "--model", "llama-3-8b", "--dtype", "fp8", "--timing", "graph"});
  CHECK(fp8.fp8);
  CHECK(fp8.dtype == sv::ElementType::BF16);
  CHECK(fp8.timing == sv::TimingMode::Graph);
  CHECK(parse({"gemm", "--model", "m", "--dtype", "E4M3"}).fp8);
  CHECK_FALSE(parse({"gemm", "--model", "m"}).fp8);  // bf16 stays the default
  // The last --dtype wins, as for every flag.
  const auto back = parse({"gemm", "--model", "m", "--dtype", "fp8", "--dtype", "fp16"});
  CHECK_FALSE(back.fp8);
  CHECK(back.dtype == sv::ElementType::FP16);
  CHECK_THROWS_WITH(parse({"gemm", "--model", "m", "--dtype", "fp4"}),
                    "--dtype expects bf16, fp16 or fp8, got 'fp4'");
  CHECK(sv::harness_usage().find("--dtype bf16|fp16|fp8") != std::string_view::npos);
}

TEST_CASE("subcommands without an fp8 path refuse --dtype fp8, naming themselves",
          "[validation][harness_cli]") {
  CHECK_THROWS_WITH(parse({"attention", "--model", "m", "--dtype", "fp8"}),
                    "attention: --dtype fp8 is measured by gemm only (quant-gemm: --formats fp8); "
                    "attention takes bf16 or fp16");
  for (const std::string_view command : {"quant-gemm", "moe-gemm"}) {
    CHECK_THROWS_WITH(parse({command, "--model", "m", "--dtype", "fp8"}),
                      Contains(std::string(command) + ": --dtype fp8 is measured by gemm only"));
  }
  CHECK_THROWS_WITH(parse({"replay", "--model", "m", "--iterations", "f", "--dtype", "e4m3"}),
                    Contains("replay: --dtype fp8 is measured by gemm only"));
  CHECK_THROWS_AS(parse({"attention", "--model", "m", "--dtype", "fp8"}), servesim::UsageError);
  // Their 16-bit choices are unchanged.
  CHECK(parse({"attention", "--model", "m", "--dtype", "fp16"}).dtype == sv::ElementType::FP16);
  CHECK_FALSE(parse({"attention", "--model", "m", "--dtype", "fp16"}).fp8);
}

TEST_CASE("an fp8 gemm plan has the four layer GEMMs and no LM head", "[validation][harness_cli]") {
  const auto root = servesim::test::source_dir();
  const auto plan = sv::plan_gemms(
      parse({"gemm", "--model", "llama-3-8b", "--tokens", "1,16", "--dtype", "fp8"}), root);
  REQUIRE(plan.gemms.size() == 8);  // 2 token counts x qkv, o, mlp_up, mlp_down
  for (const sv::GemmShape& gemm : plan.gemms) {
    CHECK(gemm.fp8);
    CHECK(gemm.dtype == sv::ElementType::BF16);
    CHECK(gemm.op != "lm_head");
  }
  CHECK(plan.gemms[0].op == "qkv");
  CHECK(plan.gemms[0].m == 1);  // m is not padded by the plan
  CHECK(plan.gemms[0].n == 6144);
  CHECK(plan.gemms[2].n == 28672);
  CHECK(plan.gemms[7].m == 16);
  CHECK(plan.gemms[7].k == 14336);
  const auto wide =
      sv::plan_gemms(parse({"gemm", "--model", "llama-3-8b", "--tokens", "1,16"}), root);
  REQUIRE(wide.gemms.size() == 10);
  CHECK_FALSE(wide.gemms[0].fp8);
}

TEST_CASE("an fp8 gemm plan refuses an n or k that is not a multiple of 16",
          "[validation][harness_cli]") {
  // Llama-3-8B with an MLP 8 wider: mlp_down's k = 14344 = 16 x 896 + 8.
  std::string config =
      servesim::test::read_file(servesim::test::source_dir() / "models" / "llama-3-8b.json");
  const std::string width = "\"intermediate_size\": 14336";
  REQUIRE(config.find(width) != std::string::npos);
  config.replace(config.find(width), width.size(), "\"intermediate_size\": 14344");
  const servesim::test::ScratchDir dir("fp8_gemm_plan");
  const std::string path = dir.write("config.json", config).string();
  const auto root = servesim::test::source_dir();
  CHECK_THROWS_WITH(
      sv::plan_gemms(parse({"gemm", "--model", path, "--dtype", "fp8"}), root),
      Contains("--dtype fp8") && Contains("mlp_down has k = 14344, not a multiple of 16"));
  CHECK_THROWS_AS(sv::plan_gemms(parse({"gemm", "--model", path, "--dtype", "fp8"}), root),
                  servesim::InputError);
  // The 16-bit GEMMs of the same model are planned.
  CHECK(sv::plan_gemms(parse({"gemm", "--model", path}), root).gemms.size() == 20);
}
