#include <catch2/catch.hpp>

#include <filesystem>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/memory/kv_capacity.h"
#include "tests/support/test_support.h"

using namespace servesim;
using Catch::Matchers::Contains;

TEST_CASE("a DP-attention run holds 8 ranks of KV and records data_parallel", "[app][dp]") {
  test::ScratchDir dir("dp_run");
  const auto out = dir.path() / "out";
  const auto r = test::run_servesim({"run", "--model", "deepseek-v3", "--hw", "h200", "--tp", "1",
                                     "--data-parallel-size", "8", "--enable-expert-parallel",
                                     "--prompt-tokens", "512", "--output-tokens", "4",
                                     "--num-requests", "4", "--out", out.string()});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto resolved = nlohmann::json::parse(test::read_file(out / "resolved_config.json"));
  CHECK(resolved["data_parallel"] == 8);
  CHECK(resolved["expert_parallel"] == true);

  // The capacity the run planned: 8 ranks' tokens of the plan for one GPU of a rank.
  KvCapacityOptions o;
  o.parallelism = Parallelism{1, 1, true, 8};
  o.weight_dtype = DType::FP8;  // the checkpoint's format (auto)
  o.kv_dtype = DType::BF16;
  o.memory_utilization = resolved["memory"]["mem_util"].get<double>();
  o.max_sequences = resolved["scheduler"]["max_num_seqs"].get<std::int64_t>();
  // vllm's start-up profile, at the scheduler's token budget.
  REQUIRE(resolved["memory"]["accounting"] == "profile_run");
  o.accounting = ActivationAccounting::ProfileRun;
  o.max_batched_tokens = resolved["scheduler"]["max_num_batched_tokens"].get<std::int64_t>();
  o.non_torch_bytes = resolved["memory"]["non_torch_bytes"].get<double>();
  o.sampler_bytes_per_logit = resolved["memory"]["sampler_bytes_per_logit"].get<double>();
  const KvCapacity plan =
      plan_kv_capacity(test::shipped_model("deepseek-v3"), test::shipped_hardware("h200"), o);
  // The paged allocator holds whole blocks of them.
  const auto block = resolved["allocator"]["block_size"].get<std::int64_t>();
  CHECK(std::stoll(test::first_csv_cell(out / "iterations.csv", "kv_capacity_tokens")) ==
        plan.kv_capacity_tokens / block * block);
  CHECK(plan.kv_capacity_tokens % 8 == 0);

  // resolved_config.json reads back as the same run.
  const auto again = dir.path() / "again";
  const auto back = test::run_servesim(
      {"run", "--config", (out / "resolved_config.json").string(), "--out", again.string()});
  INFO(back.err);
  REQUIRE(back.exit_code == 0);
  CHECK(test::read_file(again / "summary.json") == test::read_file(out / "summary.json"));
}

TEST_CASE("each DP rank admits its own max_num_seqs, as vLLM's engine cores do", "[app][dp]") {
  test::ScratchDir dir("dp_seqs");
  const auto run = [&](const std::string& dp, const std::string& name) {
    const auto out = dir.path() / name;
    const auto r = test::run_servesim({"run",
                                       "--model",
                                       "mixtral-8x7b",
                                       "--hw",
                                       "h100-sxm",
                                       "--tp",
                                       "1",
                                       "--dp",
                                       dp,
                                       "--enable-expert-parallel",
                                       "--max-num-seqs",
                                       "4",
                                       "--prompt-tokens",
                                       "64",
                                       "--output-tokens",
                                       "8",
                                       "--num-requests",
                                       "20",
                                       "--rate",
                                       "inf",
                                       "--out",
                                       out.string()});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    std::int64_t largest = 0;
    for (const std::string& cell : test::csv_column(out / "iterations.csv", "batch_size"))
      largest = std::max<std::int64_t>(largest, std::stoll(cell));
    // The configuration keeps vLLM's per-rank value.
    const auto resolved = nlohmann::json::parse(test::read_file(out / "resolved_config.json"));
    CHECK(resolved["scheduler"]["max_num_seqs"] == 4);
    return largest;
  };
  // Two ranks run 2 x 4 sequences at once; four ranks (TP 1 x DP 4 = EP 4) 16.
  CHECK(run("2", "dp2") == 8);
  CHECK(run("4", "dp4") == 16);
}

TEST_CASE("DP attention on a dense model, without EP or with PP is one line, exit 3",
          "[app][dp][bad_input]") {
  test::ScratchDir dir("dp_bad");
  const auto out = (dir.path() / "out").string();
  test::require_error(test::run_servesim({"run", "--model", "llama-3-8b", "--dp", "2",
                                          "--num-requests", "1", "--out", out}),
                      3, "Llama-3-8B is a dense model: data-parallel attention is for MoE models");
  CHECK_FALSE(std::filesystem::exists(dir.path() / "out"));
  test::require_error(test::run_servesim({"run", "--model", "mixtral-8x7b", "--tp", "2", "--dp",
                                          "2", "--num-requests", "1", "--out", out}),
                      3, "needs expert_parallel");
  test::require_error(
      test::run_servesim({"run", "--model", "mixtral-8x7b", "--tp", "2", "--pp", "2", "--dp", "2",
                          "--enable-expert-parallel", "--num-requests", "1", "--out", out}),
      3, "not modelled");
  test::require_error(
      test::run_servesim({"run", "--set", "data_parallel=0", "--num-requests", "1", "--out", out}),
      3, "data_parallel");
  CHECK_FALSE(std::filesystem::exists(dir.path() / "out"));
}

TEST_CASE("servesim roofline shows DP attention in its header and JSON", "[app][dp][cli]") {
  const std::vector<std::string> args{
      "roofline",       "--model", "deepseek-v3", "--hw",
      "h200",           "--dp",    "8",           "--enable-expert-parallel",
      "--decode-batch", "256"};
  const auto text = test::run_servesim(args);
  INFO(text.err);
  REQUIRE(text.exit_code == 0);
  CHECK_THAT(text.out, Contains("DP attention 8 ranks") && Contains("EP 8"));
  auto json_args = args;
  json_args.push_back("--json");
  const auto j = test::run_servesim(json_args).json();
  CHECK(j["data_parallel"] == 8);
  bool all_to_all = false;
  for (const auto& op : j["operators"]) {
    all_to_all = all_to_all || op["name"] == "ep_all_to_all";
    CHECK(op["name"] != "tp_allreduce");  // a rank of one GPU has no TP group
  }
  CHECK(all_to_all);
}
