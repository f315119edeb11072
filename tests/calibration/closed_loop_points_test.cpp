// Closed-loop measured points (vllm bench serve --request-rate inf --max-concurrency N): the
// reader with a setup's renames and translations, the run configuration and the metrics.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <map>

#include "sim/calibration/serving_point.h"
#include "sim/calibration/serving_prediction.h"
#include "sim/calibration/serving_run_config.h"
#include "sim/core/error.h"
#include "tests/support/test_support.h"

using namespace servesim;
using Catch::Matchers::Contains;

namespace {

// Columns named as the InferenceX file names them, cells in words.
const std::string kFile =
    "gpu,engine,model,precision,tp,isl,osl,random_range_ratio,concurrency,num_prompts,"
    "ttft_mean_ms,tpot_mean_ms,max_num_seqs,max_num_batched_tokens,cuda_graphs,other_flags\n"
    "h100,vllm,Llama-3.3-70B-Instruct-FP8,fp8,4,1024,1024,0.8,16,160,121.4,13.2,=concurrency,"
    "8192,engine default,async-scheduling\n"
    "b200,trt,Llama-3.3-70B-Instruct-FP8,fp8,1,1024,1024,0.8,4,40,383.1,14.6,engine default,"
    "16384 (max_num_tokens),padding,batch_wait 20 0.9\n";
const std::string kSetup = R"json({"source": "test",
  "columns": {"hardware": "gpu", "input_tokens": "isl", "output_tokens": "osl",
              "ttft_ms_mean": "ttft_mean_ms", "tpot_ms_mean": "tpot_mean_ms",
              "weight_dtype": "precision", "cudagraph_mode": "cuda_graphs",
              "batch_wait_timeout_iters": "other_flags",
              "batch_wait_max_tokens_ratio": "other_flags"},
  "translate": {"model": {"Llama-3.3-70B-Instruct-FP8": "llama-3.3-70b"},
                "hardware": {"h100": "h100-sxm"},
                "engine": {"vllm": "vllm-0.10", "trt": "trtllm-1.1"},
                "max_num_seqs": {"engine default": null},
                "max_num_batched_tokens": {"16384 (max_num_tokens)": 16384},
                "cudagraph_mode": {"*": null},
                "batch_wait_timeout_iters": {"batch_wait 20 0.9": 20, "*": null},
                "batch_wait_max_tokens_ratio": {"batch_wait 20 0.9": 0.9, "*": null}}})json";

std::vector<ServingPoint> read_file(const test::ScratchDir& dir) {
  ServingPointOptions o;
  o.data_root = test::source_dir();
  o.setup = dir.write("setup.json", kSetup);
  return read_serving_points(dir.write("closed.csv", kFile), o);
}

std::map<std::string, std::string> assignments(const ServingRunConfig& config) {
  std::map<std::string, std::string> out;
  for (const auto& o : config.overrides) {
    const auto eq = o.assignment.find('=');
    out[o.assignment.substr(0, eq)] = o.assignment.substr(eq + 1);
  }
  return out;
}

RequestRecord record(std::int64_t id, double first_token_s, double completion_s,
                     std::int64_t output) {
  RequestRecord r;
  r.id = id;
  r.arrival_s = 0;
  r.first_token_s = first_token_s;
  r.completion_s = completion_s;
  r.prompt_tokens = 100;
  r.output_tokens = output;
  return r;
}

}  // namespace

TEST_CASE("closed-loop rows: renamed columns, translated cells, =concurrency", "[serving_point]") {
  const test::ScratchDir dir("closed_loop_read");
  const auto points = read_file(dir);
  REQUIRE(points.size() == 2);
  const ServingPoint& v = points[0];
  CHECK(v.model == "llama-3.3-70b");
  CHECK(v.hardware == "h100-sxm");
  CHECK(v.engine == std::optional<std::string>("vllm-0.10"));
  CHECK(v.tp == 4);
  CHECK(v.knobs.max_num_seqs == std::optional<std::int64_t>(16));  // =concurrency
  CHECK(v.knobs.max_num_batched_tokens == std::optional<std::int64_t>(8192));
  CHECK(v.knobs.weight_dtype == std::optional<std::string>("fp8"));
  CHECK_FALSE(v.knobs.cudagraph_mode);  // "*": null
  CHECK_FALSE(v.knobs.batch_wait_timeout_iters);
  const auto& c = std::get<ClosedLoopRequests>(v.workload);
  CHECK(c.concurrency == 16);
  CHECK(c.num_prompts == 160);
  CHECK(c.input_tokens == 1024);
  CHECK(c.random_range_ratio == 0.8);
  CHECK(c.shortest(1024) == 819);  // floor(0.8 x 1024), as the client's randint low bound
  CHECK(v.measured[ServingMetric::TtftMs] == std::optional<double>(121.4));
  CHECK(v.measured[ServingMetric::TpotMs] == std::optional<double>(13.2));
  CHECK_FALSE(v.measured[ServingMetric::E2eMs]);
  CHECK_FALSE(v.measured.overloaded);
  CHECK(v.workload_label() == "closed loop 16 x 1024/1024 (0.8)");
  CHECK(std::isinf(*v.rate_per_s()));

  const ServingPoint& t = points[1];
  CHECK(t.hardware == "b200");  // not in the table: read as it is
  CHECK(t.engine == std::optional<std::string>("trtllm-1.1"));
  CHECK_FALSE(t.knobs.max_num_seqs);  // the engine's default
  CHECK(t.knobs.max_num_batched_tokens == std::optional<std::int64_t>(16384));
  CHECK(t.knobs.batch_wait_timeout_iters == std::optional<std::int64_t>(20));
  CHECK(t.knobs.batch_wait_max_tokens_ratio == std::optional<double>(0.9));
}

TEST_CASE("a closed loop runs num_prompts requests of uniform lengths through N users",
          "[serving_point]") {
  const test::ScratchDir dir("closed_loop_config");
  const auto points = read_file(dir);
  const ServingRunConfig config = serving_run_config(ServingRun{{points[1]}}, {});
  const auto a = assignments(config);
  CHECK(a.at("engine.name") == "\"trtllm-1.1\"");
  CHECK(a.at("scheduler.batch_wait_timeout_iters") == "20");
  CHECK(a.at("scheduler.batch_wait_max_tokens_ratio") == "0.9");
  CHECK(a.at("weight_dtype") == "\"fp8\"");
  const auto workload = nlohmann::json::parse(a.at("workload"));
  CHECK(workload.at("arrival") == nlohmann::json({{"process", "closed_loop"}, {"users", 4}}));
  CHECK(workload.at("num_requests") == 40);
  REQUIRE(config.trace.size() == 40);
  double prompt_sum = 0;
  for (const PlannedRequest& r : config.trace) {
    CHECK(r.arrival_ns == 0);
    CHECK(r.prompt_tokens >= 819);
    CHECK(r.prompt_tokens <= 1024);
    CHECK(r.output_tokens >= 819);
    CHECK(r.output_tokens <= 1024);
    prompt_sum += static_cast<double>(r.prompt_tokens);
  }
  // The mean of uniform integers in [819, 1024] is 921.5; 40 draws stay within 5% of it.
  CHECK(prompt_sum / 40 == Approx(921.5).epsilon(0.05));
  // The same seed draws the same lengths; a prefix keeps the first requests.
  ServingRunOptions prefix;
  prefix.max_requests_per_point = 8;
  const ServingRunConfig first = serving_run_config(ServingRun{{points[1]}}, prefix);
  REQUIRE(first.trace.size() == 8);
  CHECK(first.trace[7].output_tokens == config.trace[7].output_tokens);

  // FULL_DECODE_ONLY graphs decode-only steps alone; NONE captures nothing.
  ServingPoint v = points[0];
  v.knobs.cudagraph_mode = "FULL_DECODE_ONLY";
  CHECK(
      assignments(serving_run_config(ServingRun{{v}}, {})).at("engine.cuda_graphs.mixed_batches") ==
      "false");
  v.knobs.cudagraph_mode = "NONE";
  CHECK(
      assignments(serving_run_config(ServingRun{{v}}, {})).at("engine.cuda_graphs.capture_sizes") ==
      "[]");
}

TEST_CASE("a closed loop's mean TPOT averages each request's own gaps, as vLLM's client does",
          "[serving_validation]") {
  const test::ScratchDir dir("closed_loop_tpot");
  const ServingRun run{{read_file(dir)[0]}};
  ServingRunConfig config;
  config.stages = {{0, std::numeric_limits<double>::infinity()}};
  // 1.0 s over 10 gaps (100 ms) and 3.0 s over 100 gaps (30 ms): TPOT (100 + 30) / 2 = 65 ms,
  // where ITL pools every gap: 4.1 s / 110 = 37.3 ms.
  const auto m = serving_metrics_from_records(
      run, config, {record(0, 0.5, 1.5, 11), record(1, 1.0, 4.0, 101), record(2, 0.2, 0.3, 1)});
  REQUIRE(m.size() == 1);
  CHECK(*m[0][ServingMetric::TpotMs] == Approx(65.0));
  CHECK(*m[0][ServingMetric::ItlMs] == Approx(4.1 / 110 * 1000));
  CHECK(*m[0][ServingMetric::TtftMs] == Approx((0.5 + 1.0 + 0.2) / 3 * 1000));
  CHECK_FALSE(m[0].overloaded);
}

TEST_CASE("a closed-loop row that measured a TTFT over 10 s is reported apart", "[serving_point]") {
  const test::ScratchDir dir("closed_loop_saturated");
  ServingPointOptions o;
  o.data_root = test::source_dir();
  const auto file = dir.write("c.csv",
                              "model,hardware,tp,concurrency,num_prompts,input_tokens,"
                              "output_tokens,ttft_ms_mean,tpot_ms_mean\n"
                              "llama-2-7b,h100-sxm,1,64,640,8192,8192,31327,41.4\n");
  const auto points = read_serving_points(file, o);
  CHECK(points[0].measured.overloaded);
  CHECK(std::get<ClosedLoopRequests>(points[0].workload).random_range_ratio == 1.0);
}
