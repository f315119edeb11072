// Deployment reports (GPUStack's performance lab): serving commands as users ran them, read
// into the deployments, the clients' replays and the measured means; what servesim does not
// model is reported, not predicted.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <map>

#include "sim/calibration/serving_point.h"
#include "sim/calibration/serving_run_config.h"
#include "sim/core/error.h"
#include "tests/support/test_support.h"

using namespace servesim;
using Catch::Matchers::Contains;

namespace {

const std::string kHeader =
    "# a licence line, skipped\n"
    "doc,hardware,engine,serve_cmd,dataset,n_req,max_conc,rate,in_tok,out_tok,ttft_mean,"
    "tpot_mean,itl_mean,e2e_mean,out_tok_s,note\n";

const std::string kRows =
    // vLLM: an FP8 checkpoint at TP 2 with expert parallelism and a token limit, after a
    // comment; all 1,000 requests at once; a quoted dataset cell with a comma.
    "q__a100,8 x NVIDIA A100 SXM 80GB GPUs on a single node.,vllm,"
    "# a comment. vllm serve Qwen/Qwen3-32B-FP8 -tp 2 --enable-expert-parallel "
    "--max-num-batched-tokens 4096,\"sharegpt-like (mean in 217, out 202)\",1000,,,217393,"
    "201605,41875.09,114.34,95.04,50000,1887.31,\n"
    // TensorRT-LLM's underscore flags with '=' values.
    "q__a100,A single NVIDIA A100 SXM GPU.,trtllm,trtllm-serve Qwen/Qwen3-14B "
    "--max_num_tokens=16384 --max_seq_len=40960 --enable_chunked_prefill,random 2000/100,500,,,"
    "1000000,50000,86908,100,90,90000,284.6,\n"
    // SGLang at 4 users with graphs up to 8.
    "q__h100,A single NVIDIA H100 SXM GPU.,sglang,python3 -m sglang.launch_server --model-path "
    "Qwen/Qwen3-8B --cuda-graph-max-bs 8,sharegpt-like,100,4,,23260,22061,28.46,7.20,7.09,"
    "1600,524.71,\n"
    // Speculative decoding: read, not predicted.
    "q__h100,A single NVIDIA H100 SXM GPU.,sglang,python3 -m sglang.launch_server --model "
    "Qwen/Qwen3-8B-FP8 --speculative-algorithm EAGLE3 --speculative-num-steps 4,sharegpt-like,"
    "100,4,,23260,22061,50.7,3.75,11.05,900,979.24,speculative decoding\n";

std::vector<ServingPoint> read_report(const test::ScratchDir& dir, const std::string& text) {
  ServingPointOptions o;
  o.data_root = test::source_dir();
  return read_serving_points(dir.write("report.csv", text), o);
}

}  // namespace

TEST_CASE("a deployment report's rows are the commands' deployments and the clients' replays",
          "[serving_point]") {
  const test::ScratchDir dir("deployment_report");
  const auto points = read_report(dir, kHeader + kRows);
  REQUIRE(points.size() == 4);

  const ServingPoint& vllm = points[0];
  CHECK(vllm.model_name == "Qwen/Qwen3-32B-FP8");
  CHECK(vllm.row == 1);
  CHECK(vllm.line == 3);  // after the licence line and the header
  CHECK(vllm.hardware == "a100-80gb");
  CHECK(vllm.tp == 2);
  CHECK(vllm.engine == "vllm");
  CHECK(vllm.knobs.max_num_batched_tokens == 4096);
  CHECK(vllm.knobs.enable_expert_parallel == true);
  CHECK(vllm.unsupported.empty());
  const auto& burst = std::get<BenchReplay>(vllm.workload);
  REQUIRE(burst.requests.size() == 1000);
  // The measured means: 217,393 / 1,000 and 201,605 / 1,000 tokens, rounded.
  CHECK(burst.requests[0].prompt_tokens == 217);
  CHECK(burst.requests[999].output_tokens == 202);
  CHECK(std::isinf(burst.request_rate_per_s));
  CHECK_FALSE(burst.max_concurrency.has_value());
  CHECK(vllm.measured[ServingMetric::TtftMs] == 41875.09);
  CHECK(vllm.measured[ServingMetric::TpotMs] == 114.34);
  CHECK(vllm.measured[ServingMetric::ItlMs] == 95.04);
  CHECK(vllm.measured[ServingMetric::E2eMs] == 50000);
  CHECK(vllm.measured[ServingMetric::OutputTokensPerS] == 1887.31);
  CHECK_FALSE(vllm.measured.overloaded);

  const ServingPoint& trtllm = points[1];
  CHECK(trtllm.engine == "trtllm-1.1");
  CHECK(trtllm.tp == 1);
  CHECK(trtllm.knobs.max_num_batched_tokens == 16384);
  CHECK(trtllm.knobs.max_model_len == 40960);
  CHECK(std::get<BenchReplay>(trtllm.workload).requests[0].prompt_tokens == 2000);

  const ServingPoint& sglang = points[2];
  CHECK(sglang.hardware == "h100-sxm");
  CHECK(std::get<BenchReplay>(sglang.workload).max_concurrency == 4);
  REQUIRE(sglang.engine_terms.size() == 1);
  CHECK(sglang.engine_terms[0].first == "cuda_graphs.capture_sizes");
  CHECK(sglang.engine_terms[0].second == nlohmann::json::array({1, 2, 4, 8}));

  CHECK_THAT(points[3].unsupported, Contains("speculative decoding (EAGLE3"));
  CHECK(points[3].model_name == "Qwen/Qwen3-8B-FP8");

  // The run configuration carries the knobs: expert parallelism and the token limit.
  const ServingRunConfig config = serving_run_config(ServingRun{{vllm}}, {});
  bool expert_parallel = false;
  for (const auto& o : config.overrides)
    expert_parallel = expert_parallel || o.assignment == "expert_parallel=true";
  CHECK(expert_parallel);
}

TEST_CASE("a deployment report's bad rows are one line naming the row and the column",
          "[serving_point]") {
  const test::ScratchDir dir("deployment_report_bad");
  const auto error = [&](const std::string& row) {
    try {
      read_report(dir, kHeader + row);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK_THAT(error("d,A single NVIDIA H100 SXM GPU.,vllm,serve it,x,10,,,10,10,1,1,1,1,1,\n"),
             Contains("row 1, column \"serve_cmd\"") && Contains("naming a model"));
  CHECK_THAT(error("d,A single TPU.,vllm,vllm serve Qwen/Qwen3-8B,x,10,,,10,10,1,1,1,1,1,\n"),
             Contains("row 1, column \"hardware\"") && Contains("H100"));
  CHECK_THAT(error("d,A single NVIDIA H100 SXM GPU.,vllm,vllm serve acme/llm-9b,x,10,,,10,10,1,1,"
                   "1,1,1,\n"),
             Contains("column \"serve_cmd\"") && Contains("acme/llm-9b"));
  CHECK_THAT(error("d,A single NVIDIA H100 SXM GPU.,vllm,vllm serve Qwen/Qwen3-8B -tp two,x,10,,,"
                   "10,10,1,1,1,1,1,\n"),
             Contains("(--tp)") && Contains("\"two\""));
  CHECK_THAT(error("d,A single NVIDIA H100 SXM GPU.,vllm,vllm serve Qwen/Qwen3-8B,x,,,,10,10,1,1,"
                   "1,1,1,\n"),
             Contains("row 1, column \"n_req\"") && Contains("empty"));
}

TEST_CASE("validate reads GPUStack's report as it is and predicts what servesim models",
          "[serving_point][measured]") {
  const auto file = test::shared_data_path("measured/gpustack-perflab.csv");
  if (!file) return;
  const auto r = test::run_servesim({"validate", "--measured", file->string(), "--json"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto document = r.json();
  const auto& points = document["points"];
  REQUIRE(points.size() == 70);
  std::size_t speculative = 0;
  std::size_t predicted = 0;
  for (const auto& p : points) {
    const std::string note = p.value("note", "");
    if (note.find("not modelled: speculative decoding") != std::string::npos) ++speculative;
    if (note.empty()) ++predicted;
  }
  CHECK(speculative == 14);
  CHECK(predicted >= 45);
}
