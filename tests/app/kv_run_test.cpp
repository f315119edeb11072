// `servesim kv` plans a replica's memory as `servesim run` does with the same flags and the
// same defaults (the engine's), so both print the same KV capacity.
#include <catch2/catch.hpp>

#include <cmath>
#include <regex>
#include <string>
#include <vector>

#include "tests/support/test_support.h"

using namespace servesim;
using Catch::Matchers::Contains;

namespace {

// The allocator's capacity `run` prints: "KV capacity N tokens per replica."
std::int64_t run_capacity(std::vector<std::string> args) {
  args.insert(args.begin(), "run");
  args.insert(args.end(), {"--num-requests", "5"});
  const auto r = test::run_servesim(args);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  std::smatch m;
  REQUIRE(std::regex_search(r.out, m, std::regex("KV capacity ([0-9]+) tokens per replica")));
  return std::stoll(m[1].str());
}

nlohmann::json kv_json(std::vector<std::string> args) {
  args.insert(args.begin(), "kv");
  args.push_back("--json");
  const auto r = test::run_servesim(args);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return r.json();
}

}  // namespace

TEST_CASE("kv and run print the same KV capacity for the vllm engine", "[kv][cli]") {
  const std::vector<std::vector<std::string>> deployments = {
      // vllm's defaults on a GPU of 70 GiB or more: 1,024 sequences.
      {"--model", "llama-3-8b", "--hw", "h100-sxm"},
      {"--model", "llama-3.1-70b", "--hw", "h100-sxm", "--tp", "4", "--max-len", "32768"},
      // An A100 takes the other rule (256 sequences, 2,048 tokens).
      {"--model", "qwen3-8b", "--hw", "a100-80gb", "--max-num-seqs", "64"},
  };
  for (const auto& deployment : deployments) {
    INFO(deployment[1] + " on " + deployment[3]);
    const nlohmann::json kv = kv_json(deployment);
    CHECK(kv["engine"] == "vllm");
    CHECK(kv["vllm_kv_cache_size_tokens"].get<std::int64_t>() == run_capacity(deployment));
  }
}

TEST_CASE("kv takes the engine's max_num_seqs, as run does", "[kv][cli]") {
  // vllm on an H100 plans for 1,024 sequences: less room than for 256.
  const nlohmann::json engine = kv_json({"--model", "llama-3-8b", "--hw", "h100-sxm"});
  const nlohmann::json planned_256 =
      kv_json({"--model", "llama-3-8b", "--hw", "h100-sxm", "--max-num-seqs", "256"});
  CHECK(engine["kv_capacity_tokens"].get<std::int64_t>() <
        planned_256["kv_capacity_tokens"].get<std::int64_t>());
  // A memory accounting term given keeps its value over the engine's; the others stay.
  const nlohmann::json lighter_sampler = kv_json(
      {"--model", "llama-3-8b", "--hw", "h100-sxm", "--set", "memory.sampler_bytes_per_logit=4"});
  CHECK(lighter_sampler["kv_capacity_tokens"].get<std::int64_t>() >
        engine["kv_capacity_tokens"].get<std::int64_t>());
  CHECK(lighter_sampler["vllm_kv_cache_size_tokens"].get<std::int64_t>() ==
        run_capacity({"--model", "llama-3-8b", "--hw", "h100-sxm", "--set",
                      "memory.sampler_bytes_per_logit=4"}));
  const nlohmann::json explicit_1024 =
      kv_json({"--model", "llama-3-8b", "--hw", "h100-sxm", "--max-num-seqs", "1024"});
  CHECK(engine["kv_capacity_tokens"] == explicit_1024["kv_capacity_tokens"]);
  // Another engine, its own defaults: TensorRT-LLM's 90% of memory and 64-token blocks.
  const nlohmann::json trtllm =
      kv_json({"--model", "llama-3-8b", "--hw", "h100-sxm", "--engine", "trtllm"});
  CHECK(trtllm["engine"] == "trtllm");
  CHECK(trtllm["vllm_kv_cache_size_tokens"].get<std::int64_t>() % 64 == 0);
  CHECK(trtllm["vllm_kv_cache_size_tokens"].get<std::int64_t>() ==
        run_capacity({"--model", "llama-3-8b", "--hw", "h100-sxm", "--engine", "trtllm"}));
}

TEST_CASE("kv plans vllm's KV cache within 0.7% of the GPU blocks vLLM 0.15.1 reported",
          "[kv][cli][measured]") {
  const auto file = test::shared_data_path("measured/vllm-0.15.1-kv-blocks-h100-sxm.csv");
  if (!file) return;
  const auto column = [&](const char* name) { return test::csv_column(*file, name); };
  const auto models = column("model");
  const auto tps = column("tp");
  const auto tokens = column("max_num_batched_tokens");
  const auto utilizations = column("gpu_memory_utilization");
  const auto block_sizes = column("block_size");
  const auto reported = column("gpu_kv_blocks");
  REQUIRE_FALSE(models.empty());
  for (std::size_t i = 0; i < models.size(); ++i) {
    INFO(models[i] + " TP " + tps[i]);
    // The runs' setup (measured/README.md): max_num_seqs 128, max_model_len 4096, fp16.
    const nlohmann::json kv = kv_json(
        {"--model", models[i], "--hw", "h100-sxm", "--tp", tps[i], "--max-num-batched-tokens",
         tokens[i], "--mem-util", utilizations[i], "--block-size", block_sizes[i], "--max-num-seqs",
         "128", "--max-len", "4096", "--weight-dtype", "fp16"});
    const double blocks = static_cast<double>(kv["vllm_kv_cache_size_tokens"].get<std::int64_t>()) /
                          std::stod(block_sizes[i]);
    CHECK(std::abs(blocks / std::stod(reported[i]) - 1) <= 0.007);
  }
}

TEST_CASE("kv says whether the engine starts and the longest sequence that fits", "[kv][cli]") {
  const nlohmann::json refused =
      kv_json({"--model", "llama-3.1-70b", "--hw", "h100-sxm", "--tp", "2"});
  CHECK(refused["starts"] == false);
  CHECK_THAT(refused["does_not_start"].get<std::string>(), Contains("largest max_len"));
  const std::int64_t fits = refused["max_len_that_fits"].get<std::int64_t>();
  CHECK(fits > 4000);
  CHECK(fits < 5000);
  const nlohmann::json starts =
      kv_json({"--model", "llama-3.1-70b", "--hw", "h100-sxm", "--tp", "2", "--max-len", "4096"});
  CHECK(starts["starts"] == true);
  CHECK(starts["max_len_that_fits"] == 4096);
}
