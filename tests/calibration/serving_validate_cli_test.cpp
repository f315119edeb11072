// `servesim validate --measured`: end to end, in-process, on made-up points that use only the
// configuration keys every build has (no engine: the scheduler stands in for it), and on the
// shared measured files when they are present.
#include <catch2/catch.hpp>

#include <cmath>

#include "tests/support/test_support.h"

using namespace servesim;
using Catch::Matchers::Contains;

namespace {

const std::string kHeader =
    "model,tp,workload,stage,rate_per_s,stage_duration_s,groups,users_per_group,"
    "system_prompt_tokens,requests_sent,requests_completed,prompt_tokens_mean,"
    "output_tokens_mean,ttft_ms_mean,e2e_ms_mean,output_tokens_per_s\n";
// Two back-to-back stages of fixed-length requests and a third workload of its own.
const std::string kRows =
    "llama-2-7b,1,chat,0,2,600,4,2,100,1200,1200,300,50,30,600,100\n"
    "llama-2-7b,1,chat,1,4,600,4,2,100,2400,2400,300,50,35,700,200\n"
    "llama-2-7b,1,long,0,1,600,1,1,100,600,600,1000,20,60,400,20\n";
// The knobs of the vLLM 0.15.1 data, and no engine.
const std::string kSetup = R"({"source": "test", "hardware": "h100-sxm",
  "knobs": {"max_num_seqs": 128, "max_model_len": 4096, "max_num_batched_tokens": 2048,
            "gpu_memory_utilization": 0.9, "block_size": 16}})";

bool finite_positive(const nlohmann::json& value) {
  return value.is_number() && std::isfinite(value.get<double>()) && value.get<double>() > 0;
}

}  // namespace

TEST_CASE("validate --measured simulates load stages back to back and reports each point",
          "[serving_validate]") {
  const test::ScratchDir dir("serving_validate_load");
  const auto file = dir.write("points.csv", kHeader + kRows);
  const auto setup = dir.write("setup.json", kSetup);
  const auto csv = dir.path() / "out.csv";
  const auto r =
      test::run_servesim({"validate", "--measured", file.string(), "--setup", setup.string(),
                          "--max-requests-per-point", "30", "--csv", csv.string(), "--json"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = r.json();
  CHECK(j.at("runs") == 2);
  CHECK(j.at("max_requests_per_point") == 30);
  const auto& points = j.at("points");
  REQUIRE(points.size() == 3);
  for (const auto& p : points) {
    INFO(p.dump());
    for (const char* metric : {"ttft_ms_mean", "itl_ms_mean", "e2e_ms_mean"}) {
      CHECK(finite_positive(p.at("metrics").at(metric).at("predicted")));
      CHECK(finite_positive(p.at("metrics").at(metric).at("measured")));
    }
  }
  CHECK(points[0].at("stage") == 0);
  CHECK(points[1].at("stage") == 1);
  // Light load on an H100: a 300-token prompt starts within tens of milliseconds.
  CHECK(points[0].at("metrics").at("ttft_ms_mean").at("predicted").get<double>() < 200);
  CHECK(j.at("metrics").at("ttft_ms_mean").at("count") == 3);
  const std::string written = test::read_file(csv);
  CHECK(written.rfind("source,row,model,", 0) == 0);
  CHECK(std::count(written.begin(), written.end(), '\n') == 1 + 3 * 5);  // 5 metrics a point

  // The same run again gives the same numbers: deterministic for the seed.
  const auto again =
      test::run_servesim({"validate", "--measured", file.string(), "--setup", setup.string(),
                          "--max-requests-per-point", "30", "--json"});
  REQUIRE(again.exit_code == 0);
  CHECK(again.json().at("points") == points);

  const auto table = test::run_servesim({"validate", "--measured", file.string(), "--setup",
                                         setup.string(), "--max-requests-per-point", "30"});
  REQUIRE(table.exit_code == 0);
  CHECK_THAT(table.out, Contains("ttft_ms_mean") && Contains("MAPE") && Contains("bias") &&
                            Contains("Measured overloaded") && Contains("llama-2-7b"));
}

TEST_CASE("validate --measured runs a static batch with the static scheduler",
          "[serving_validate]") {
  const test::ScratchDir dir("serving_validate_static");
  const auto file = dir.write(
      "batches.csv",
      "hardware,model,batch_size,tp,input_tokens,output_tokens,output_tokens_per_s_per_gpu\n"
      "h100-sxm,llama-2-7b,16,1,128,128,2000\nh100-sxm,llama-2-7b,64,1,128,128,6000\n");
  const auto setup = dir.write("setup.json", R"({"source": "test"})");
  const auto r = test::run_servesim(
      {"validate", "--measured", file.string(), "--setup", setup.string(), "--json"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = r.json();
  const auto& points = j.at("points");
  REQUIRE(points.size() == 2);
  const auto throughput = [&](std::size_t i) {
    return points[i].at("metrics").at("output_tokens_per_s_per_gpu").at("predicted").get<double>();
  };
  CHECK(throughput(0) > 0);
  CHECK(throughput(1) > 2 * throughput(0));  // decoding is memory-bound: batching pays
}

TEST_CASE("validate --measured replays servesim's own --save-result file", "[serving_validate]") {
  const test::ScratchDir dir("serving_validate_replay");
  const auto result = dir.path() / "result.json";
  const auto run = test::run_servesim({"run", "--num-requests", "40", "--rate", "4", "--scheduler",
                                       "vllm_v1", "--save-result", result.string(),
                                       "--percentile-metrics", "ttft,tpot,itl,e2el"});
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  const auto r =
      test::run_servesim({"validate", "--measured", result.string(), "--hw", "h100-sxm", "--json"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = r.json();
  REQUIRE(j.at("points").size() == 1);
  const auto& p = j.at("points")[0];
  CHECK(p.at("workload") == "replay 40");
  CHECK(p.at("rate_per_s") == 4.0);
  for (const char* metric : {"ttft_ms_mean", "itl_ms_mean", "e2e_ms_mean"}) {
    CHECK(finite_positive(p.at("metrics").at(metric).at("predicted")));
  }
  // The replay has the mean lengths where the run drew ShareGPT's: close, not equal.
  CHECK(std::fabs(p.at("metrics").at("itl_ms_mean").at("relative_error").get<double>()) < 0.5);
  // Without --hw a bench serve result names no hardware.
  const auto no_hw = test::run_servesim({"validate", "--measured", result.string()});
  test::require_error(no_hw, 3, "--hw");
}

TEST_CASE("validate: --measured and --measurements are two modes", "[serving_validate]") {
  const auto both = test::run_servesim(
      {"validate", "--measured", "a.csv", "--measurements", "b.json", "--hw", "h100-sxm"});
  test::require_error(both, 2, "two modes");
  const auto stray = test::run_servesim(
      {"validate", "--hw", "h100-sxm", "--measurements", "b.json", "--engine", "vllm"});
  test::require_error(stray, 2, "--engine goes with --measured");
  const auto none = test::run_servesim({"validate"});
  test::require_error(none, 2, "--measurements");
}

TEST_CASE("validate --measured on the shared vLLM 0.15.1 H100 data",
          "[serving_validate][shared_data]") {
  const auto shared = test::shared_data_path("measured/vllm-0.15.1-h100-sxm.csv");
  if (!shared) return;
  const std::filesystem::path& file = *shared;
  // The shipped setup names engine vllm; this one leaves the engine out, so that the test runs
  // on the keys every build has (the vllm_v1 scheduler stands in for the engine).
  const test::ScratchDir dir("serving_validate_shared");
  const auto setup = dir.write("setup.json", kSetup);
  const auto r = test::run_servesim({"validate", "--measured", file.string(), "--setup",
                                     setup.string(), "--max-requests-per-point", "8", "--json"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = r.json();
  const auto& points = j.at("points");
  REQUIRE(points.size() == 24);
  int codegen = 0;
  for (const auto& p : points) {
    if (p.at("model") != "meta-llama/Llama-2-7b-hf" || p.at("workload") != "codegen") continue;
    ++codegen;
    INFO(p.dump());
    for (const char* metric : {"ttft_ms_mean", "itl_ms_mean", "e2e_ms_mean"})
      CHECK(finite_positive(p.at("metrics").at(metric).at("predicted")));
  }
  CHECK(codegen == 2);
  int reasoning_overloaded = 0;
  for (const auto& p : points) {
    if (p.at("workload") == "reasoning" && p.at("measured_overloaded") == true) {
      ++reasoning_overloaded;
    }
  }
  // Llama-2-7B, Llama-2-70B and Mixtral complete fewer than 90%; CodeLlama-34B nearly all,
  // but its mean TTFT is 120 s.
  CHECK(reasoning_overloaded == 4);
}

TEST_CASE("validate --measured on the shared TensorRT-LLM and 2023 vLLM tables",
          "[serving_validate][shared_data]") {
  const auto shared = test::shared_data_path("measured/trtllm-0.9.0-static-fp8.csv");
  if (!shared) return;
  const std::filesystem::path measured = shared->parent_path();
  const test::ScratchDir dir("serving_validate_tables");
  // The shipped setups without their engines (trtllm, vllm-v0), for the same reason as above.
  const auto trt = dir.write("trt.json", R"({"source": "test", "knobs": {"weight_dtype": "fp8"}})");
  const auto r = test::run_servesim({"validate", "--measured",
                                     (measured / "trtllm-0.9.0-static-fp8.csv").string(), "--setup",
                                     trt.string(), "--json"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = r.json();
  const auto& points = j.at("points");
  REQUIRE(points.size() == 19);
  for (const auto& p : points) {
    INFO(p.dump());
    CHECK(finite_positive(p.at("metrics").at("output_tokens_per_s_per_gpu").at("predicted")));
  }

  const auto v0 = dir.write("v0.json", R"({"source": "test", "model": "opt-13b",
      "hardware": "a100-40gb", "tp": 1, "num_requests": 1000, "prompt_tokens": 512,
      "output_tokens_mean": 128, "columns": {"total_tokens_per_s": "total_tokens_per_s_blog"}})");
  const auto b = test::run_servesim(
      {"validate", "--measured", (measured / "vllm-2023-opt13b-a100-40gb.csv").string(), "--setup",
       v0.string(), "--max-requests-per-point", "100", "--json"});
  INFO(b.err);
  REQUIRE(b.exit_code == 0);
  const auto bj = b.json();
  const auto& bursts = bj.at("points");
  REQUIRE(bursts.size() == 4);
  for (const auto& p : bursts)
    CHECK(finite_positive(p.at("metrics").at("total_tokens_per_s").at("predicted")));
}
