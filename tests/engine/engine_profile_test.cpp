#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/app/policies.h"
#include "sim/config/catalog.h"
#include "sim/engine/engine_profile.h"
#include "tests/support/test_support.h"

using namespace servesim;
using Catch::Matchers::Contains;

namespace {

const char* const kEngines[] = {"vllm",   "vllm-0.10", "vllm-0.6",  "vllm-v0",
                                "sglang", "trtllm",    "trtllm-1.1"};

nlohmann::json resolved_run(const std::vector<std::string>& flags, const std::string& tag) {
  const test::ScratchDir dir("engine_" + tag);
  const auto out = dir.path() / "out";
  std::vector<std::string> args{"run", "--num-requests", "30",    "--rate",
                                "10",  "--no-plots",     "--out", out.string()};
  args.insert(args.end(), flags.begin(), flags.end());
  const auto r = test::run_servesim(args);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  nlohmann::json j = nlohmann::json::parse(test::read_file(out / "resolved_config.json"));
  j["@summary"] = nlohmann::json::parse(test::read_file(out / "summary.json"));
  return j;
}

}  // namespace

TEST_CASE("every shipped engine loads, names a registered scheduler and round-trips", "[engine]") {
  const Catalog catalog(test::source_dir() / "engines", "engine", "--engine");
  CHECK(catalog.names() == std::vector<std::string>{"sglang", "trtllm", "trtllm-1.1", "vllm",
                                                    "vllm-0.10", "vllm-0.6", "vllm-v0"});
  const auto schedulers = scheduler_registry();
  for (const char* name : kEngines) {
    INFO(name);
    const EngineProfile e = test::shipped_engine(name);
    CHECK(e.name == name);
    CHECK_NOTHROW(schedulers.find(e.scheduling.scheduler, "scheduling.scheduler"));
    const EngineProfile again = engine_from_json(engine_to_json(e), "again");
    CHECK(engine_to_json(again) == engine_to_json(e));
  }
}

TEST_CASE("vllm sizes its batches by the GPU as vLLM does", "[engine]") {
  const EngineProfile vllm = test::shipped_engine("vllm");
  const auto h100 = test::shipped_hardware("h100-sxm");
  const auto a100 = test::shipped_hardware("a100-80gb");
  const auto l40s = test::shipped_hardware("l40s");
  CHECK(vllm.scheduler_parameters_for(h100.name, h100.memory_capacity_bytes) ==
        nlohmann::json{{"max_num_batched_tokens", 8192}, {"max_num_seqs", 1024}});
  // An A100 of 80 GB is excepted by name; an L40S has 48 GB.
  CHECK(vllm.scheduler_parameters_for(a100.name, a100.memory_capacity_bytes) ==
        nlohmann::json{{"max_num_batched_tokens", 2048}, {"max_num_seqs", 256}});
  CHECK(vllm.scheduler_parameters_for(l40s.name, l40s.memory_capacity_bytes) ==
        nlohmann::json{{"max_num_batched_tokens", 2048}, {"max_num_seqs", 256}});
}

TEST_CASE("an engine's defaults reach the run and explicit flags override them", "[engine][app]") {
  const auto by_default = resolved_run({}, "default");
  CHECK(by_default["engine"]["name"] == "vllm");
  CHECK(by_default["scheduler"]["name"] == "vllm_v1");
  CHECK(by_default["allocator"]["block_size"] == 16);
  CHECK(by_default["memory"]["mem_util"] == 0.9);
  CHECK(by_default["engine"]["enable_prefix_caching"] == true);
  CHECK(by_default["engine"]["cuda_graphs"]["capture_sizes"].back() == 512);

  const auto a100 = resolved_run({"--hw", "a100-80gb"}, "a100");
  CHECK(a100["scheduler"]["max_num_seqs"] == 256);
  CHECK(a100["scheduler"]["max_num_batched_tokens"] == 2048);
  // vLLM V1 captures graphs up to 2 x max_num_seqs.
  CHECK(a100["engine"]["cuda_graphs"]["capture_sizes"].back() == 512);
  const auto few = resolved_run({"--max-num-seqs", "64"}, "few");
  CHECK(few["engine"]["cuda_graphs"]["capture_sizes"].back() == 128);

  const auto mine = resolved_run({"--max-num-seqs", "64", "--block-size", "32", "--mem-util", "0.8",
                                  "--no-enable-prefix-caching", "--set", "engine.host.step_s=0.01"},
                                 "mine");
  CHECK(mine["scheduler"]["max_num_seqs"] == 64);
  CHECK(mine["scheduler"]["max_num_batched_tokens"] == 8192);  // still the engine's
  CHECK(mine["allocator"]["block_size"] == 32);
  CHECK(mine["memory"]["mem_util"] == 0.8);
  CHECK(mine["engine"]["enable_prefix_caching"] == false);
  CHECK(mine["engine"]["host"]["step_s"] == 0.01);
  CHECK(mine["engine"]["host"]["schedule_s"] == by_default["engine"]["host"]["schedule_s"]);
  // 10 ms of host work a step, hidden behind no GPU step this small: decode slows to it.
  CHECK(mine["@summary"]["tpot_s"]["mean"].get<double>() > 0.0099);

  // A scheduler other than the engine's keeps its own defaults.
  const auto sarathi = resolved_run({"--scheduler", "sarathi"}, "sarathi");
  CHECK(sarathi["scheduler"]["token_budget"] == 512);
  CHECK(sarathi["engine"]["host"] == by_default["engine"]["host"]);
}

TEST_CASE("each engine runs with its own scheduler, KV blocks and costs", "[engine][app]") {
  for (const char* name : kEngines) {
    INFO(name);
    const EngineProfile e = test::shipped_engine(name);
    const auto resolved = resolved_run({"--engine", name}, name);
    CHECK(resolved["engine"]["name"] == name);
    CHECK(resolved["scheduler"]["name"] == e.scheduling.scheduler);
    CHECK(resolved["allocator"]["block_size"] == e.scheduling.block_size);
    CHECK(resolved["engine"]["host"]["overlaps_device"] == e.costs.host.overlaps_device);
    CHECK(resolved["@summary"]["requests_completed"] == 30);
  }
  // The 2023 engine launches every kernel from Python and adds its host work: slower decode
  // than the current engine on the same GPU.
  const double v0 = resolved_run({"--engine", "vllm-v0"}, "v0")["@summary"]["tpot_s"]["mean"];
  const double v1 = resolved_run({}, "v1")["@summary"]["tpot_s"]["mean"];
  CHECK(v0 > 1.2 * v1);
}

TEST_CASE("a resolved configuration holds every engine value and reads back as the same run",
          "[engine][app]") {
  const test::ScratchDir dir("engine_resolved");
  const auto first = dir.path() / "first";
  REQUIRE(test::run_servesim({"run", "--engine", "sglang", "--num-requests", "30", "--no-plots",
                              "--out", first.string()})
              .exit_code == 0);
  const auto second = dir.path() / "second";
  const auto r = test::run_servesim({"run", "--config", (first / "resolved_config.json").string(),
                                     "--no-plots", "--out", second.string()});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(test::read_file(first / "summary.json") == test::read_file(second / "summary.json"));
  CHECK(test::read_file(first / "resolved_config.json") ==
        test::read_file(second / "resolved_config.json"));
}

TEST_CASE("an engine's CUDA-core decode attention terms are read and checked", "[engine]") {
  const EngineProfile trt = test::shipped_engine("trtllm");
  // Fitted by servesim calibrate (docs/validation.md).
  CHECK(trt.costs.kernels.decode_attention_core_efficiency == Approx(0.142).margin(0.001));
  CHECK(trt.costs.kernels.decode_attention_core_sequence_keys == Approx(176).margin(1));
  CHECK(trt.costs.kernels.decode_attention_tensor_core_min_group == 8);
  CHECK(trt.sources.count("kernels.decode_attention_core_efficiency") == 1);
  // Off in every other engine: their decode attention is the hardware's kernel.
  for (const char* name : {"vllm", "vllm-0.10", "vllm-0.6", "vllm-v0", "sglang", "trtllm-1.1"}) {
    INFO(name);
    CHECK(test::shipped_engine(name).costs.kernels.decode_attention_core_efficiency == 0);
  }
  nlohmann::json j = engine_to_json(trt);
  const auto refused = [&](const char* key, nlohmann::json value, const char* expected) {
    nlohmann::json bad = j;
    bad["kernels"][key] = value;
    INFO(key << " = " << value.dump());
    REQUIRE_THROWS_WITH(engine_from_json(bad, "e.json"),
                        Contains("e.json") && Contains(key) && Contains(expected));
  };
  refused("decode_attention_core_efficiency", 1.5, "between 0 (off) and 1");
  refused("decode_attention_core_efficiency", -0.1, "non-negative");
  refused("decode_attention_core_sequence_keys", -1, "non-negative");
  refused("decode_attention_tensor_core_min_group", 2.5, "whole number");
  refused("decode_attention_tensor_core_min_group", -8, "whole number");
}

TEST_CASE("vllm-0.10 captures graphs in steps of 8 up to 2 x max_num_seqs, with async scheduling",
          "[engine]") {
  const EngineProfile e = test::shipped_engine("vllm-0.10");
  CHECK(e.scheduling.scheduler == "vllm_v1");
  CHECK(e.costs.host.overlaps_device);  // --async-scheduling, as the measured recipes ran it
  // [1, 2, 4] + range(8, 513, 8): 3 + 64 sizes (vLLM 0.10 VllmConfig._set_cudagraph_sizes).
  const auto& sizes = e.costs.cuda_graph_capture_sizes;
  REQUIRE(sizes.size() == 67);
  CHECK(sizes[2] == 4);
  CHECK(sizes[3] == 8);
  CHECK(sizes[35] == 264);  // 0.15 steps by 16 above 256; 0.10 does not
  CHECK(sizes.back() == 512);
  CHECK(e.costs.cuda_graphs_mixed_batches);
  CHECK(e.costs.max_capture_size_per_max_num_seqs == std::optional<double>(2.0));
  const auto few = resolved_run({"--engine", "vllm-0.10", "--max-num-seqs", "20"}, "v010");
  CHECK(few["engine"]["cuda_graphs"]["capture_sizes"].back() == 40);
}

TEST_CASE("trtllm-1.1 graphs generation-only batches and waits for batches only when told",
          "[engine]") {
  const EngineProfile e = test::shipped_engine("trtllm-1.1");
  CHECK(e.scheduling.scheduler == "sarathi");
  CHECK(e.scheduling.block_size == 32);
  CHECK_FALSE(e.costs.cuda_graphs_mixed_batches);
  // Padding: 1, 2, 4, multiples of 8 to 128, then powers of two to 1024: 3 + 16 + 3 sizes.
  CHECK(e.costs.cuda_graph_capture_sizes.size() == 22);
  CHECK(e.costs.cuda_graph_capture_sizes[18] == 128);
  CHECK(e.costs.cuda_graph_capture_sizes.back() == 1024);
  const auto resolved = resolved_run({"--engine", "trtllm-1.1"}, "trt11");
  CHECK(resolved["scheduler"]["name"] == "sarathi");
  CHECK(resolved["scheduler"]["max_num_seqs"] == 2048);
  CHECK(resolved["scheduler"]["token_budget"] == 8192);
  CHECK(resolved["scheduler"]["batch_wait_timeout_iters"] == 0);
  CHECK(resolved["allocator"]["block_size"] == 32);
}
